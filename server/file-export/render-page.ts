import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The HTML of the export render pages (GET /api/render/dashboard/{id}, GET /api/render/widget/{id}): web/render's page
 * with its script inlined; it loads ECharts and the shared chart module from the viewer page's assets (/s/assets).
 */

function renderDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'web', 'render', 'index.html'))) return path.join(dir, 'web', 'render');
    dir = path.dirname(dir);
  }
  throw new Error('web/render not found beside the server');
}

let page: Promise<string> | undefined;

export function renderPageHtml(): Promise<string> {
  page ??= (async () => {
    const dir = renderDir();
    const [html, js] = await Promise.all([
      readFile(path.join(dir, 'index.html'), 'utf8'),
      readFile(path.join(dir, 'render.js'), 'utf8'),
    ]);
    return html.replace('/*RENDER_JS*/', () => js);
  })();
  return page;
}
