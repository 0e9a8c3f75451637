import type { Actor } from '../auth/actor';
import { readableDataset } from '../datasets/access';
import type { DataSourceRow } from '../data-sources/connection';
import type { DatasetOwnerRef } from '../datasets/access';
import type { AppDeps } from '../app/deps';
import { compileWidgetQuery } from '../query/compile/compile-widget';
import { compileAndRun, datasetQueryContext, rowObject } from '../query/run/dataset-context';
import { checkViewAs } from '../access/viewer';
import { KPI_KIND, type CalculatedFieldDef, type FilterSpec, type ParameterValues, type ShelfField, type SortSpec, type WidgetQueryInput } from '../query/compile/types';
import { loadWidgetForData } from './widget-load';
import { configOf } from './views';

/** The part of a data request that may override or extend the saved configuration. */
export interface WidgetDataRequest {
  type?: string;
  rows?: ShelfField[];
  series?: ShelfField[];
  columns?: ShelfField[];
  filters?: FilterSpec[];
  sorts?: SortSpec[];
  calculated_fields?: CalculatedFieldDef[];
  parameters?: ParameterValues;
  page: number;
  page_size: number;
  view_as_user_id?: number;
}

export type WidgetData =
  | { kind: 'flat'; rows: Record<string, unknown>[]; page: { page: number; pageSize: number; hasMore: boolean } }
  | { kind: 'kpi'; row: Record<string, unknown> };

/** #151: the saved widget, with the request's overrides; its filters are AND-ed with the saved ones. */
export async function widgetData(deps: AppDeps, actor: Actor, id: number, req: WidgetDataRequest): Promise<WidgetData> {
  const { row, dataset, sources } = await loadWidgetForData(deps, actor, id);
  await checkViewAs(deps.db, actor, req.view_as_user_id);
  const saved = configOf(row);
  const shelves = { rows: req.rows ?? saved.rows, series: req.series ?? saved.series, columns: req.columns ?? saved.columns };
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
      ...(replacesShelves ? [] : saved.calculated_fields.map((def, i) => ({ path: `savedCalculatedFields[${i}]`, def }))),
    ],
    parameters: req.parameters ?? {},
    page: req.page,
    pageSize: req.page_size,
  };
  return runWidgetQuery(deps, dataset, query, sources);
}

export interface WidgetPreviewRequest extends WidgetDataRequest {
  dataset_id: number;
  type: string;
  rows: ShelfField[];
  series: ShelfField[];
  columns: ShelfField[];
  filters: FilterSpec[];
  sorts: SortSpec[];
  calculated_fields: CalculatedFieldDef[];
}

/** #152: data for a configuration that is not saved. */
export async function widgetPreview(deps: AppDeps, actor: Actor, req: WidgetPreviewRequest): Promise<WidgetData> {
  const { row: dataset } = await readableDataset(deps.db, actor, req.dataset_id);
  await checkViewAs(deps.db, actor, req.view_as_user_id);
  return runWidgetQuery(deps, dataset, {
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
  });
}

export async function runWidgetQuery(deps: AppDeps, dataset: DatasetOwnerRef, input: WidgetQueryInput, sources?: DataSourceRow[]): Promise<WidgetData> {
  const ctx = await datasetQueryContext(deps, dataset, sources);
  // Compiling depends on the model (its version), the request and the sources' dialects (fixed per source id) only.
  const planKey = `${ctx.model.id}:${ctx.model.version}:${JSON.stringify(input)}`;
  const { query, result } = await compileAndRun(deps, ctx, (dialectOf) => {
    const cached = deps.caches.plans.get(planKey);
    if (cached) return cached;
    const compiled = compileWidgetQuery(ctx.model, input, dialectOf);
    deps.caches.plans.set(planKey, compiled);
    return compiled;
  });
  if (input.type === KPI_KIND) {
    const first = result.rows[0] ?? query.columns.map(() => null);
    return { kind: 'kpi', row: rowObject(query, first) };
  }
  const shown = result.rows.length > input.pageSize ? result.rows.slice(0, input.pageSize) : result.rows;
  return {
    kind: 'flat',
    rows: shown.map((r) => rowObject(query, r)),
    page: { page: input.page, pageSize: input.pageSize, hasMore: result.rows.length > input.pageSize || result.truncated },
  };
}
