import { readableObject } from '../access/object-access';
import type { AppDeps } from '../app/deps';
import {
  dashboardDataOf,
  dashboardDataSource,
  type DashboardDataPaging,
  type DashboardDataSource,
} from '../dashboards/data';
import { layoutOf, widgetIdsOf } from '../dashboards/layout';
import { layoutRefs, type DashboardRow } from '../dashboards/store';
import { AppError, ERROR_TABLE, notFound, type ErrorKind } from '../kernel/errors';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';
import type { ParameterValues } from '../query/compile/types';
import { readData } from '../query/read';
import { openSharedDashboard, type SharedDashboard } from '../share-links/link-access';
import { configOf, type WidgetRow } from '../widgets/views';
import type { WidgetData } from '../widgets/data';
import { MSG } from './messages';

/*
 * The public viewer of a share link: GET /api/public/link/{token}/dashboard, /widget/{id}, POST /widget/{id}/data and
 * GET /dataset/{id}/field-values. It shows what the dashboard shows and nothing else: its layout, the widgets on
 * it (their saved shelves; the viewer filters only through the dashboard's selectors and parameters), and the
 * values of the fields its selectors filter on. Any other widget, dataset or field is a 404. Everything is read
 * with the rights of the link's owner through the one data entry point (server/query/read.ts), so the owner's
 * object rights, row-level and column-level security apply; if the owner can no longer read the dashboard, the link
 * answers as an unknown one.
 */

type Scalar = string | number | boolean | null;

/**
 * What every viewer request of one link needs of its dashboard, read with the owner's rights: the dashboard, its
 * layout, the widgets on it the owner can read, and the fields its selectors filter on (with their datasets).
 */
interface SharedState {
  row: DashboardRow;
  source: DashboardDataSource;
  widgets: Map<number, WidgetRow>;
  selectorDatasets: Map<number, number>;
}

// Per app (its deps) and link owner, keyed with the read epoch: a save of the dashboard, its widgets or datasets, or a
// change of the owner's rights bumps it, so this node never serves a stale layout; other nodes for at most the TTL.
// Entries are promises, so that 200 viewers arriving at once load the state once.
const states = new WeakMap<object, TtlCache<string, Promise<SharedState>>>();

function sharedState(deps: AppDeps, shared: SharedDashboard): Promise<SharedState> {
  let cache = states.get(deps.caches);
  if (!cache) {
    cache = new TtlCache(READ_DECISION_TTL_MS);
    states.set(deps.caches, cache);
  }
  const { actor } = shared.viewer;
  const key = `${deps.caches.readEpoch.value}:${shared.dashboardId}:${actor.userId}:${actor.groupIds.join(',')}`;
  let state = cache.get(key);
  if (!state) {
    state = loadSharedState(deps, shared);
    state.catch(() => cache.delete(key));
    cache.set(key, state);
  }
  return state;
}

async function loadSharedState(deps: AppDeps, shared: SharedDashboard): Promise<SharedState> {
  let row: DashboardRow;
  try {
    row = (await readableObject(deps.db, shared.viewer.actor, 'dashboard', shared.dashboardId)).row;
  } catch (err) {
    // The owner can no longer read the dashboard: the link is as dead as an unknown one.
    if (err instanceof AppError && err.kind === 'not_found') throw deadLink();
    throw err;
  }
  const layout = layoutOf(row.layout);
  const widgets = new Map<number, WidgetRow>();
  for (const id of widgetIdsOf(layout)) {
    const widget = await readableObject(deps.db, shared.viewer.actor, 'widget', id).catch((err: unknown) => {
      if (err instanceof AppError && err.kind === 'not_found') return null;
      throw err;
    });
    if (widget) widgets.set(id, widget.row);
  }
  const refs = await layoutRefs(
    deps.db,
    [],
    layout.selectors.map((s) => s.field_id),
  );
  const selectorDatasets = new Map([...refs.fields].map(([id, f]) => [id, f.datasetId]));
  return { row, source: await dashboardDataSource(deps, layout), widgets, selectorDatasets };
}

const deadLink = () => notFound(MSG.deadLink);

/** The link opened and its dashboard's state. */
async function openShared(deps: AppDeps, token: string, grant: string | undefined) {
  const shared = await openSharedDashboard(deps, token, grant);
  return { shared, state: await sharedState(deps, shared) };
}

/** A widget the layout shows and the owner can read (else 404, as for any widget not on the dashboard). */
function sharedWidget(state: SharedState, widgetId: number): WidgetRow {
  const widget = state.widgets.get(widgetId);
  if (!widget) throw notFound(MSG.widgetNotFound(widgetId));
  return widget;
}

/** What a viewer learns of a widget: enough to draw it, not its saved filters or formulas. */
function publicWidgetView(row: WidgetRow) {
  const c = configOf(row);
  const shelf = (fields: typeof c.rows) => fields.map((f) => ({ id: f.id, title: f.alias ?? f.field ?? f.id }));
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    dataset_id: row.datasetId,
    rows: shelf(c.rows),
    series: shelf(c.series),
    columns: shelf(c.columns),
  };
}

export type PublicWidgetView = ReturnType<typeof publicWidgetView>;

/** GET /api/public/link/{token}/dashboard: the layout, read-only, with the widgets it shows and where selectors look. */
export async function publicDashboard(deps: AppDeps, token: string, grant: string | undefined) {
  const { state } = await openShared(deps, token, grant);
  const { row, source } = state;
  const { layout } = source;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tabs: layout.tabs,
    items: layout.items,
    selectors: layout.selectors.map((s) => ({ ...s, dataset_id: state.selectorDatasets.get(s.field_id) ?? null })),
    parameters: layout.parameters,
    widgets: [...state.widgets.values()].map(publicWidgetView),
    updated_at: row.updatedAt.toISOString(),
  };
}

export type PublicDashboardView = Awaited<ReturnType<typeof publicDashboard>>;

/** GET /api/public/link/{token}/widget/{id}: a widget of the shared dashboard. */
export async function publicWidget(deps: AppDeps, token: string, grant: string | undefined, widgetId: number) {
  const { state } = await openShared(deps, token, grant);
  return publicWidgetView(sharedWidget(state, widgetId));
}

export interface PublicWidgetDataRequest {
  /** Values of the dashboard's selectors (replacing their saved values). */
  filters: { selector_id: string; values: Scalar[] }[];
  /** Values of the dashboard's parameters. */
  parameters?: Record<string, Scalar>;
  /** Order by output columns of the widget's saved shelves. */
  sorts?: { field_id: string; direction: 'asc' | 'desc' }[];
  page: number;
  page_size: number;
}

/** The kind of the error table a widget's error entry had, so that the viewer gets the same status. */
const kindOfStatus = (status: number): ErrorKind =>
  (Object.entries(ERROR_TABLE).find(([, row]) => row.status === status)?.[0] as ErrorKind | undefined) ?? 'internal';

/** POST /api/public/link/{token}/widget/{id}/data: as dashboard data reads the widget, with the owner's rights. */
export async function publicWidgetData(
  deps: AppDeps,
  token: string,
  grant: string | undefined,
  widgetId: number,
  req: PublicWidgetDataRequest,
): Promise<WidgetData> {
  const { shared, state } = await openShared(deps, token, grant);
  const widget = sharedWidget(state, widgetId);
  const paging: DashboardDataPaging = { page: req.page, page_size: req.page_size };
  if (req.sorts?.length) {
    const c = configOf(widget);
    const shown = new Set([...c.rows, ...c.series, ...c.columns].map((f) => f.id));
    req.sorts.forEach((s, i) => {
      if (!shown.has(s.field_id))
        throw new AppError('validation', undefined, { fieldErrors: { [`sorts[${i}].fieldId`]: MSG.notOnWidget } });
    });
    paging.sorts = req.sorts;
  }
  // The viewers of one link mostly ask the same thing at the same moment: identical requests in flight share one
  // read (no result is kept beyond it; the query engine's result cache decides what is reused).
  const { actor } = shared.viewer;
  const key = `${deps.caches.readEpoch.value}:${shared.dashboardId}:${actor.userId}:${actor.groupIds.join(',')}:${widgetId}:${JSON.stringify(req)}`;
  let running = inFlightOf(deps).get(key);
  if (!running) {
    running = readSharedWidget(deps, shared, state, widgetId, req, paging);
    const map = inFlightOf(deps);
    map.set(key, running);
    void running.finally(() => map.delete(key)).catch(() => {});
  }
  return running;
}

const inFlight = new WeakMap<object, Map<string, Promise<WidgetData>>>();
function inFlightOf(deps: AppDeps): Map<string, Promise<WidgetData>> {
  let map = inFlight.get(deps.caches);
  if (!map) {
    map = new Map();
    inFlight.set(deps.caches, map);
  }
  return map;
}

async function readSharedWidget(
  deps: AppDeps,
  shared: SharedDashboard,
  state: SharedState,
  widgetId: number,
  req: PublicWidgetDataRequest,
  paging: DashboardDataPaging,
): Promise<WidgetData> {
  const {
    widgets: [entry],
  } = await dashboardDataOf(
    deps,
    shared.viewer,
    state.source,
    { widget_ids: [widgetId], filters: req.filters, parameters: req.parameters as ParameterValues | undefined },
    paging,
  );
  if ('data' in entry) return entry.data;
  throw new AppError(kindOfStatus(entry.error.code), entry.error.message, { fieldErrors: entry.error.errors });
}

export interface PublicFieldValuesRequest {
  fieldId: number;
  query?: string;
  limit: number;
}

/** GET /api/public/link/{token}/dataset/{id}/field-values: only for a field a selector of the dashboard filters on. */
export async function publicFieldValues(
  deps: AppDeps,
  token: string,
  grant: string | undefined,
  datasetId: number,
  req: PublicFieldValuesRequest,
) {
  const { shared, state } = await openShared(deps, token, grant);
  if (![...state.selectorDatasets.values()].includes(datasetId)) throw notFound(MSG.datasetNotFound(datasetId));
  if (state.selectorDatasets.get(req.fieldId) !== datasetId) throw notFound(MSG.fieldNotFound(req.fieldId));
  let dataset;
  try {
    dataset = (await readableObject(deps.db, shared.viewer.actor, 'dataset', datasetId)).row;
  } catch (err) {
    if (err instanceof AppError && err.kind === 'not_found') throw notFound(MSG.datasetNotFound(datasetId));
    throw err;
  }
  const { rows } = await readData(deps, shared.viewer, dataset, {
    kind: 'field-values',
    fieldId: req.fieldId,
    query: req.query,
    limit: req.limit,
  });
  return {
    field_id: req.fieldId,
    values: rows.slice(0, req.limit).map((r) => (r[0] ?? null) as Scalar),
    has_more: rows.length > req.limit,
  };
}
