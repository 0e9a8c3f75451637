/*
 * The export render page (GET /api/render/dashboard/{id}, GET /api/render/widget/{id}): headless Chromium opens it
 * with the X-Render-Token header on every request. It asks GET /api/render/context for the object and its widgets,
 * POST /api/render/widget/{id}/data for each widget's data, draws them with the shared chart module (web/charts, the
 * same drawing as the share-link viewer page) and sets body[data-state=ready] once every chart finished drawing.
 */
import { drawWidget } from '/s/assets/charts.js';

async function api(method, path) {
  const res = await fetch(path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'POST' ? '{}' : undefined,
  });
  const body = await res.json();
  if (!body.success) throw new Error(body.error?.message || `HTTP ${res.status}`);
  return body.data;
}

function finished(chart) {
  return new Promise((resolve) => {
    chart.on('finished', resolve);
    setTimeout(resolve, 3000);
  });
}

async function main() {
  const ctx = await api('GET', '/api/render/context');
  document.getElementById('title').textContent = ctx.object.name;
  document.title = ctx.object.name;
  const main = document.getElementById('main');
  const waits = [];
  for (const widget of ctx.object.widgets) {
    const tile = document.createElement('section');
    tile.className = 'tile';
    const h = document.createElement('h2');
    h.textContent = widget.name;
    const body = document.createElement('div');
    body.className = 'body';
    tile.append(h, body);
    main.append(tile);
    const data = await api('POST', `/api/render/widget/${widget.id}/data`);
    const { chart } = drawWidget(body, widget, data);
    if (chart) waits.push(finished(chart));
  }
  await Promise.all(waits);
  document.body.dataset.state = 'ready';
}

main().catch((e) => {
  const p = document.createElement('p');
  p.id = 'error';
  p.textContent = e.message;
  document.body.append(p);
  document.body.dataset.state = 'error';
});
