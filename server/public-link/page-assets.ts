import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The static files of the share-link viewer page (/s/{token} and /s/assets/{name}): web/viewer (the page), web/charts
 * (the chart module it shares with the export render pages) and ECharts' own browser build from node_modules. The
 * page is the same for every token: it asks the public viewer API for everything else. Files are read once per
 * process. Only the names below are served; nothing of the request reaches a file path.
 */

interface Asset {
  body: Buffer;
  type: string;
}

const JS = 'text/javascript; charset=utf-8';
const require = createRequire(import.meta.url);

/** The folder that holds web/ (the checkout, from server/public-link or from the dist/ bundle). */
function webRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'web', 'viewer', 'index.html'))) return path.join(dir, 'web');
    dir = path.dirname(dir);
  }
  throw new Error('web/viewer not found beside the server');
}

const SOURCES: Record<string, () => { file: string; type: string }> = {
  'index.html': () => ({ file: path.join(webRoot(), 'viewer', 'index.html'), type: 'text/html; charset=utf-8' }),
  'viewer.js': () => ({ file: path.join(webRoot(), 'viewer', 'viewer.js'), type: JS }),
  'viewer.css': () => ({ file: path.join(webRoot(), 'viewer', 'viewer.css'), type: 'text/css; charset=utf-8' }),
  'charts.js': () => ({ file: path.join(webRoot(), 'charts', 'charts.js'), type: JS }),
  'echarts.min.js': () => ({ file: require.resolve('echarts/dist/echarts.min.js'), type: JS }),
};

const loaded = new Map<string, Promise<Asset>>();

/** An asset by its public name, or null for any other name. */
export function viewerAsset(name: string): Promise<Asset> | null {
  if (!Object.hasOwn(SOURCES, name)) return null;
  let asset = loaded.get(name);
  if (!asset) {
    const { file, type } = SOURCES[name]();
    asset = fs.readFile(file).then((body) => ({ body, type }));
    asset.catch(() => loaded.delete(name));
    loaded.set(name, asset);
  }
  return asset;
}
