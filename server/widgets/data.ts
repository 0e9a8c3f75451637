import { viewerOf, type Viewer } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readableObject } from '../access/object-access';
import { KPI_KIND, type CompiledQuery, type ParameterValues, type WidgetQueryInput } from '../query/compile/types';
import { createLimiter } from '../kernel/map-bounded';
import { readData, readWidgetQueries, rowObject } from '../query/read';
import { assertWithinSavedWidget } from './saved-reads';
import { loadWidgetForData } from './widget-load';
import { configOf, type WidgetConfig } from './views';
import { deepFreeze } from '../kernel/deep-freeze';

/** What a data request may send besides the saved configuration (the router's zod input is checked against it). */
interface DataRequestExtras {
  type?: string;
  parameters?: ParameterValues;
  page: number;
  page_size: number;
  view_as_user_id?: number;
}

/** POST /api/widget/{id}/data: the parts of the configuration the request overrides or extends. */
export type WidgetDataRequest = Partial<WidgetConfig> & DataRequestExtras;

/** POST /api/widget/preview: a whole configuration that is not saved. */
export type WidgetPreviewRequest = WidgetConfig & DataRequestExtras & { dataset_id: number; type: string };

export type WidgetData =
  | { kind: 'flat'; rows: Record<string, unknown>[]; page: { page: number; pageSize: number; hasMore: boolean } }
  | { kind: 'kpi'; row: Record<string, unknown> };

/**
 * POST /api/widget/{id}/data: the saved widget, with the request's overrides; its filters are AND-ed with the saved
 * ones. Overrides are for readers of the widget's dataset: a caller who reads the widget alone only pages through it
 * (server/widgets/saved-reads.ts).
 */
export async function widgetData(deps: AppDeps, actor: Actor, id: number, req: WidgetDataRequest): Promise<WidgetData> {
  // Every dashboard widget's request comes here: a caller reading as themselves is known without a turn.
  const finding = viewerOf(deps, actor, req.view_as_user_id);
  const viewer = finding instanceof Promise ? await finding : finding;
  return readWidget(deps, viewer, await widgetReadOf(deps, viewer, id, req));
}

/** Widget data read by a viewer already known (an export job's render page reads as the job's user). */
export async function widgetDataAs(
  deps: AppDeps,
  viewer: Viewer,
  id: number,
  req: Omit<WidgetDataRequest, 'view_as_user_id'>,
): Promise<WidgetData> {
  return readWidget(deps, viewer, await widgetReadOf(deps, viewer, id, req));
}

async function readWidget(deps: AppDeps, viewer: Viewer, { dataset, sources, query }: WidgetRead): Promise<WidgetData> {
  return widgetDataOf(query, await readData(deps, viewer, dataset, { kind: 'widget', query }, sources));
}

/**
 * The data of several widgets read by one viewer (dashboard data): each answer is the one widgetDataAs would give,
 * in the order given, failures one by one. Widgets of one dataset are read together (server/query/read.ts
 * readWidgetQueries), so those differing only in their measures share one query; at most `concurrency` reads run
 * at once.
 */
export async function widgetsDataAs(
  deps: AppDeps,
  viewer: Viewer,
  requests: { id: number; req: Omit<WidgetDataRequest, 'view_as_user_id'> }[],
  concurrency: number,
): Promise<PromiseSettledResult<WidgetData>[]> {
  const out = new Array<PromiseSettledResult<WidgetData>>(requests.length);
  const loaded = await Promise.allSettled(
    requests.map(({ id, req }) => widgetReadOf(deps, viewer, id, req, 'dashboard')),
  );
  const byDataset = new Map<number, number[]>();
  loaded.forEach((l, i) => {
    if (l.status === 'rejected') out[i] = l;
    else byDataset.set(l.value.dataset.id, [...(byDataset.get(l.value.dataset.id) ?? []), i]);
  });
  const limit = createLimiter(concurrency);
  await Promise.all(
    [...byDataset.values()].map(async (indexes) => {
      const reads = indexes.map((i) => (loaded[i] as PromiseFulfilledResult<WidgetRead>).value);
      const { dataset, sources } = reads[0];
      const queries = reads.map((r) => r.query);
      const results = await readWidgetQueries(deps, viewer, dataset, queries, sources, limit);
      results.forEach((r, k) => {
        out[indexes[k]] =
          r.status === 'fulfilled' ? { status: 'fulfilled', value: widgetDataOf(queries[k], r.value) } : r;
      });
    }),
  );
  return out;
}

/**
 * The saved widget found for the viewer, with its dataset, sources and the query the request makes of it (the
 * request's overrides over the saved configuration); widget data reads it one page, file exports stream all of it.
 * A request shaped by the caller (widget data, exports and their render pages) may go beyond the saved widget only
 * when the viewer reads its dataset (server/widgets/saved-reads.ts); a dashboard's selectors and parameters are the
 * dashboard's saved configuration, not the caller's.
 */
export async function widgetReadOf(
  deps: AppDeps,
  viewer: Viewer,
  id: number,
  req: Omit<WidgetDataRequest, 'view_as_user_id'>,
  shapedBy: 'caller' | 'dashboard' = 'caller',
) {
  const loaded = loadWidgetForData(deps, viewer.actor, id);
  const { row, dataset, sources, datasetReadable } = loaded instanceof Promise ? await loaded : loaded;
  if (shapedBy === 'caller') assertWithinSavedWidget(row, req, datasetReadable);
  const built = builtQueries.get(req)?.get(row);
  if (built) return { row, dataset, sources, query: built };
  const query = widgetQueryOf(row, req);
  // Only a frozen request can be the same object next time: the REST input memo hands on one per identical request.
  if (Object.isFrozen(req)) {
    let byRow = builtQueries.get(req);
    if (!byRow) builtQueries.set(req, (byRow = new WeakMap()));
    byRow.set(row, deepFreeze(query));
  }
  return { row, dataset, sources, query };
}

/*
 * Queries built for a request by the request object and the widget row they were built over. The REST input memo
 * (adapters/rest/input-memo.ts) hands on one frozen input object for every identical POST /api/widget/{id}/data, and
 * loadWidgetForData one row object per caller while its cached decision stands, so a repeated request reuses the
 * query object, and readData the text and answer key it keeps with it (server/query/read.ts), instead of building them
 * again. Each caller's row has its own entry (viewers of one dashboard send the same body); a changed widget is a new
 * row object, so a new query.
 */
const builtQueries = new WeakMap<object, WeakMap<WidgetRow, WidgetQueryInput>>();

type WidgetRow = Awaited<ReturnType<typeof loadWidgetForData>>['row'];

/** The query a request makes of the saved widget: its overrides over the saved configuration. */
function widgetQueryOf(row: WidgetRow, req: Omit<WidgetDataRequest, 'view_as_user_id'>): WidgetQueryInput {
  const saved = configOf(row);
  const shelves = {
    rows: req.rows ?? saved.rows,
    series: req.series ?? saved.series,
    columns: req.columns ?? saved.columns,
  };
  const replacesShelves = req.rows !== undefined || req.series !== undefined || req.columns !== undefined;
  // Saved sorts follow the saved shelves: when the request replaces the shelves, sorts of fields no longer there drop.
  const ids = new Set([...shelves.rows, ...shelves.series, ...shelves.columns].map((f) => f.id));
  const sorts = req.sorts ?? saved.sorts.filter((s) => ids.has(s.field_id));
  const query: WidgetQueryInput = {
    type: req.type ?? row.type,
    ...shelves,
    filters: [
      ...saved.filters.map((filter, i) => ({ path: `savedFilters[${i}]`, filter })),
      ...(req.filters ?? []).map((filter, i) => ({ path: `filters[${i}]`, filter })),
    ],
    sorts,
    // Specification rule 2: shelves sent in the request need their calculated_fields in the request too. Only a
    // request that keeps the saved shelves reads the definitions saved with them (never the dataset's own).
    calculatedFields: [
      ...(req.calculated_fields ?? []).map((def, i) => ({ path: `calculatedFields[${i}]`, def })),
      ...(replacesShelves
        ? []
        : saved.calculated_fields.map((def, i) => ({ path: `savedCalculatedFields[${i}]`, def }))),
    ],
    parameters: req.parameters ?? {},
    page: req.page,
    pageSize: req.page_size,
  };
  return query;
}

type WidgetRead = Awaited<ReturnType<typeof widgetReadOf>>;

/** POST /api/widget/preview: data for a configuration that is not saved. */
export async function widgetPreview(deps: AppDeps, actor: Actor, req: WidgetPreviewRequest): Promise<WidgetData> {
  const viewer = await viewerOf(deps, actor, req.view_as_user_id);
  const { row: dataset } = await readableObject(deps.db, viewer.actor, 'dataset', req.dataset_id);
  const query: WidgetQueryInput = {
    type: req.type,
    rows: req.rows,
    series: req.series,
    columns: req.columns,
    filters: req.filters.map((filter, i) => ({ path: `filters[${i}]`, filter })),
    sorts: req.sorts,
    calculatedFields: req.calculated_fields.map((def, i) => ({ path: `calculatedFields[${i}]`, def })),
    parameters: req.parameters ?? {},
    page: req.page,
    pageSize: req.page_size,
  };
  return widgetDataOf(query, await readData(deps, viewer, dataset, { kind: 'widget', query }));
}

/*
 * The answer last made of a result's rows, by those rows: a cached result's rows (unmasked) are one array while the
 * result cache holds them, so a repeated request answers the same frozen page instead of making its row objects again.
 * Everything the page is made of is in the entry (the query, the kind, the page asked for). Only pages of a dashboard
 * widget's size: a page lives as long as its rows, beside them, outside the result cache's memory budget, and freezing
 * a large one would cost its first read more than its repeats save. A page is kept the second time its rows are read
 * (null marks rows read once): a selector's new value makes rows no other request reads, and freezing and keeping
 * their page cost every such miss for nothing (as the envelope's text: adapters/rest/envelope-memo.ts).
 */
const PAGE_MEMO_MAX_ROWS = 200;
const pagesOfRows = new WeakMap<
  unknown[][],
  { query: CompiledQuery; kpi: boolean; page: number; pageSize: number; truncated: boolean; data: WidgetData } | null
>();

/** The rows of one page (the target read one more to tell has_more), or the one row of a KPI. */
function widgetDataOf(input: WidgetQueryInput, read: Awaited<ReturnType<typeof readData>>): WidgetData {
  const { query, rows, truncated } = read;
  const kpi = input.type === KPI_KIND;
  const known = pagesOfRows.get(rows);
  if (
    known?.query === query &&
    known.kpi === kpi &&
    known.page === input.page &&
    known.pageSize === input.pageSize &&
    known.truncated === truncated
  )
    return known.data;
  if (rows.length > PAGE_MEMO_MAX_ROWS) return pageOf(input, read);
  if (known === undefined) {
    // Rows read for the first time (a miss): noted only, as most such pages are never asked for again.
    pagesOfRows.set(rows, null);
    return pageOf(input, read);
  }
  const data = deepFreeze(pageOf(input, read));
  pagesOfRows.set(rows, { query, kpi, page: input.page, pageSize: input.pageSize, truncated, data });
  return data;
}

function pageOf(input: WidgetQueryInput, { query, rows, truncated }: Awaited<ReturnType<typeof readData>>): WidgetData {
  if (input.type === KPI_KIND) {
    const first = rows[0] ?? query.columns.map(() => null);
    return { kind: 'kpi', row: rowObject(query, first) };
  }
  const shown = rows.length > input.pageSize ? rows.slice(0, input.pageSize) : rows;
  return {
    kind: 'flat',
    rows: shown.map((r) => rowObject(query, r)),
    page: { page: input.page, pageSize: input.pageSize, hasMore: rows.length > input.pageSize || truncated },
  };
}
