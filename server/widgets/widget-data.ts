import { viewerOf, type Viewer } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readableObject } from '../access/object-access';
import { KPI_KIND, type ParameterValues, type WidgetQueryInput } from '../query/compile/types';
import { readData, rowObject } from '../query/read';
import { loadWidgetForData } from './widget-load';
import { configOf, type WidgetConfig } from './views';

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

/** POST /api/widget/{id}/data: the saved widget, with the request's overrides; its filters are AND-ed with the saved ones. */
export async function widgetData(deps: AppDeps, actor: Actor, id: number, req: WidgetDataRequest): Promise<WidgetData> {
  return widgetDataAs(deps, await viewerOf(deps, actor, req.view_as_user_id), id, req);
}

/** Widget data read by a viewer already known (dashboard data reads every widget as one viewer). */
export async function widgetDataAs(
  deps: AppDeps,
  viewer: Viewer,
  id: number,
  req: Omit<WidgetDataRequest, 'view_as_user_id'>,
): Promise<WidgetData> {
  const { row, dataset, sources } = await loadWidgetForData(deps, viewer.actor, id);
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
  const result = await readData(deps, viewer, dataset, { kind: 'widget', query }, sources);
  return widgetDataOf(query, result);
}

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

/** The rows of one page (the target read one more to tell has_more), or the one row of a KPI. */
function widgetDataOf(
  input: WidgetQueryInput,
  { query, rows, truncated }: Awaited<ReturnType<typeof readData>>,
): WidgetData {
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
