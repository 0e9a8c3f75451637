/*
 * The viewer page of a share link (/s/{token}). It uses only the public viewer API (/api/public/link/{token}/...):
 * the link's state first (a suspended, expired, revoked or unknown link gets a clear page, a password link the
 * password form), then the layout, then each widget's data, drawn by the shared chart module. The grant of a
 * password link lives in sessionStorage for this tab only.
 *
 * For tests and the curious: window.shareViewer = { charts: Map(widget id -> ECharts instance), data: Map(widget id ->
 * widget data) }, and body[data-state] is loading | ready | message | password.
 */
import { drawWidget } from './charts.js';

const token = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const api = `/api/public/link/${encodeURIComponent(token)}`;
const grantKey = `share-grant:${token}`;
const main = document.getElementById('main');
const title = document.getElementById('title');

const state = { charts: new Map(), data: new Map() };
window.shareViewer = state;

const el = (tag, props = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(node.dataset, v);
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, body) {
  const headers = {};
  const grant = sessionStorage.getItem(grantKey);
  if (grant) headers['x-share-grant'] = grant;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let json = null;
  try {
    json = await res.json();
  } catch {
    /* not JSON */
  }
  if (!res.ok || !json?.success) throw new ApiError(res.status, json?.error?.message ?? `Ошибка ${res.status}`);
  return json.data;
}

function showMessage(kind, heading, text) {
  document.body.dataset.state = 'message';
  document.body.dataset.message = kind;
  title.textContent = 'Дашборд недоступен';
  document.title = heading;
  main.replaceChildren(el('div', { className: 'message', role: 'alert' }, el('h2', {}, heading), el('p', {}, text)));
}

const MESSAGES = {
  suspended: ['Ссылка приостановлена', 'Владелец дашборда временно закрыл доступ по этой ссылке.'],
  expired: ['Срок действия ссылки истёк', 'Попросите владельца дашборда продлить ссылку или выдать новую.'],
  gone: ['Ссылка не найдена', 'Ссылка отозвана, изменена или никогда не существовала.'],
  busy: ['Слишком много запросов', 'Подождите минуту и обновите страницу.'],
};

function showFailure(err) {
  if (err instanceof ApiError && err.status === 404) return showMessage('gone', ...MESSAGES.gone);
  if (err instanceof ApiError && err.status === 429) return showMessage('busy', ...MESSAGES.busy);
  if (err instanceof ApiError && err.status === 401) {
    sessionStorage.removeItem(grantKey);
    return start();
  }
  if (err instanceof ApiError && err.status === 403) return start();
  showMessage('error', 'Не удалось открыть дашборд', err.message);
}

function showPasswordForm() {
  document.body.dataset.state = 'password';
  title.textContent = 'Дашборд защищён паролем';
  const input = el('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const error = el('div', { className: 'form-error', role: 'alert' });
  const form = el(
    'form',
    { className: 'password' },
    el('label', {}, 'Пароль', input),
    el('button', { type: 'submit' }, 'Открыть'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    try {
      const { grant } = await call('POST', '/unlock', { password: input.value });
      sessionStorage.setItem(grantKey, grant);
      await start();
    } catch (err) {
      error.textContent =
        err.status === 401
          ? 'Неверный пароль'
          : err.status === 429
            ? 'Слишком много попыток, подождите минуту'
            : err.message;
      input.select();
    }
  });
  main.replaceChildren(el('div', { className: 'message' }, el('h2', {}, 'Введите пароль'), form));
  input.focus();
}

// ---- the dashboard ----

let dashboard;
let activeTab = null;
/** Selector id -> chosen values (absent: the saved values). */
const chosen = new Map();

function selectorFilters() {
  return [...chosen].map(([selector_id, values]) => ({ selector_id, values }));
}

async function buildSelector(s) {
  const select = el('select', { name: s.id, dataset: { selector: s.id } });
  select.append(el('option', { value: '' }, 'Все'));
  if (s.dataset_id !== null) {
    try {
      const { values } = await call('GET', `/dataset/${s.dataset_id}/field-values?fieldId=${s.field_id}&limit=500`);
      for (const v of values) select.append(el('option', { value: JSON.stringify(v) }, v === null ? '—' : String(v)));
    } catch {
      /* the selector still shows its saved value */
    }
  }
  if (s.values.length === 1) select.value = JSON.stringify(s.values[0]);
  select.addEventListener('change', () => {
    chosen.set(s.id, select.value === '' ? [] : [JSON.parse(select.value)]);
    const driven = new Set(s.widget_ids);
    void drawTiles((id) => driven.has(id));
  });
  return el('label', {}, s.name, select);
}

function gridOf(items) {
  const columns = Math.max(12, ...items.map((i) => i.x + i.w));
  const grid = el('div', { className: 'grid' });
  grid.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
  return grid;
}

const widgetOf = (id) => dashboard.widgets.find((w) => w.id === id);
const tileBodies = new Map();

async function drawTile(widgetId) {
  const body = tileBodies.get(widgetId);
  const widget = widgetOf(widgetId);
  if (!body || !widget) return;
  try {
    const data = await call('POST', `/widget/${widgetId}/data`, { filters: selectorFilters() });
    state.data.set(widgetId, data);
    const { chart } = drawWidget(body, widget, data);
    if (chart) state.charts.set(widgetId, chart);
    else state.charts.delete(widgetId);
  } catch (err) {
    if (err instanceof ApiError && [401, 403, 404].includes(err.status)) throw err;
    body.replaceChildren(el('div', { className: 'error' }, err.message));
  }
}

/** Draws the tiles of the active tab (those `which` picks); the page is ready once they all answered. */
async function drawTiles(which = () => true) {
  document.body.dataset.state = 'loading';
  const ids = [...tileBodies.keys()].filter(which);
  try {
    await Promise.all(ids.map(drawTile));
    document.body.dataset.state = 'ready';
  } catch (err) {
    showFailure(err);
  }
}

function showTab(tabId) {
  activeTab = tabId;
  for (const b of document.querySelectorAll('.tabs button'))
    b.setAttribute('aria-selected', String(b.dataset.tab === tabId));
  const items = dashboard.items.filter((i) => i.tab_id === tabId || dashboard.tabs.length === 0);
  const grid = gridOf(items);
  for (const chart of state.charts.values()) chart.dispose();
  state.charts.clear();
  tileBodies.clear();
  for (const item of items) {
    const widget = widgetOf(item.widget_id);
    if (!widget) continue;
    const body = el('div', { className: 'body' });
    const tile = el(
      'section',
      { className: 'tile', dataset: { widgetId: String(widget.id), kind: widget.type } },
      el('h3', {}, widget.name),
      body,
    );
    tile.style.gridColumn = `${item.x + 1} / span ${item.w}`;
    tile.style.gridRow = `${item.y + 1} / span ${item.h}`;
    grid.append(tile);
    tileBodies.set(widget.id, body);
  }
  document.getElementById('tiles').replaceChildren(grid);
  return drawTiles();
}

async function showDashboard() {
  dashboard = await call('GET', '/dashboard');
  title.textContent = dashboard.name;
  document.title = dashboard.name;
  const tabs = el('nav', { className: 'tabs', role: 'tablist' });
  for (const tab of dashboard.tabs) {
    const button = el('button', { type: 'button', role: 'tab', dataset: { tab: tab.id } }, tab.name);
    button.addEventListener('click', () => void showTab(tab.id));
    tabs.append(button);
  }
  const selectors = el('div', { className: 'selectors' });
  for (const s of dashboard.selectors) selectors.append(await buildSelector(s));
  main.replaceChildren(tabs, selectors, el('div', { id: 'tiles' }));
  await showTab(dashboard.tabs[0]?.id ?? null);
}

window.addEventListener('resize', () => {
  for (const chart of state.charts.values()) chart.resize();
});

async function start() {
  try {
    const link = await call('GET', '');
    if (link.status !== 'active') return showMessage(link.status, ...MESSAGES[link.status]);
    if (link.password_required && !link.unlocked) {
      sessionStorage.removeItem(grantKey);
      return showPasswordForm();
    }
    await showDashboard();
  } catch (err) {
    showFailure(err);
  }
}

void start();
