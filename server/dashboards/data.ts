import { readableObject } from '../access/object-access';
import { viewerOf, type Viewer } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { describeError } from '../kernel/error-response';
import { invalid, type FieldErrors } from '../kernel/errors';
import { formatFieldPath } from '../kernel/validation';
import { DEFAULT_PAGE_SIZE, type FilterSpec, type ParameterValues, type SortSpec } from '../query/compile/types';
import { widgetsDataAs, type WidgetData } from '../widgets/data';
import { layoutOf, widgetIdsOf, type DashboardLayout, type DashboardSelector } from './layout';
import { MSG } from './messages';
import { selectorFieldRefs } from './store';

/*
 * POST /api/dashboard/{id}/data: the data of several of the dashboard's widgets in one call. Each widget is read as
 * POST /api/widget/{id}/data reads it (server/widgets/data.ts, which goes through the one data entry point
 * server/query/read.ts, with its result cache and single-flight), with the filters of the selectors and the values
 * of the dashboard parameters that drive it. Widgets run concurrently, a few at a time; one that fails gets an error
 * entry (the envelope's error) and the others still answer. Widgets of one dataset that differ only in their
 * measures are answered by one query computing all of them.
 */

/**
 * At most this many reads of one call run at once (each holds a source connection while it runs); widgets that
 * differ only in their measures share one read (server/query/read.ts readWidgetQueries).
 */
const WIDGET_CONCURRENCY = 8;

type Scalar = string | number | boolean | null;

export interface DashboardDataRequest {
  /** Widgets to read; empty: every widget the layout shows. */
  widget_ids: number[];
  /** Values of selectors, replacing their saved values (empty values: the control is cleared). */
  filters: { selector_id: string; values: Scalar[] }[];
  /** Values of dashboard parameters, replacing their saved values. */
  parameters?: Record<string, Scalar>;
  view_as_user_id?: number;
}

/** A page and an order other than the widgets' first page in their saved order (the share-link viewer's table). */
export interface DashboardDataPaging {
  page?: number;
  page_size?: number;
  sorts?: SortSpec[];
}

export type WidgetDataEntry =
  | { widget_id: number; data: WidgetData }
  | { widget_id: number; error: { code: number; message: string; errors?: FieldErrors } };

export interface DashboardData {
  widgets: WidgetDataEntry[];
}

/** `[object.field]` or `[calculated]`, the expression a widget filter names a dataset field by. */
const refText = (name: string) => name.replaceAll(']', ']]');
const fieldRef = (f: { name: string; objectName: string | null }) =>
  f.objectName === null ? `[${refText(f.name)}]` : `[${refText(f.objectName)}.${refText(f.name)}]`;

/** Every problem of the request against the layout, keyed by path; empty when it can run. */
function requestProblems(layout: DashboardLayout, req: DashboardDataRequest): FieldErrors {
  const errors: FieldErrors = {};
  const shown = new Set(widgetIdsOf(layout));
  req.widget_ids.forEach((id, i) => {
    if (!shown.has(id)) errors[formatFieldPath(['widget_ids', i])] ??= MSG.widgetNotPlaced(id);
  });
  const selectors = new Set(layout.selectors.map((s) => s.id));
  req.filters.forEach((f, i) => {
    if (!selectors.has(f.selector_id))
      errors[formatFieldPath(['filters', i, 'selector_id'])] ??= MSG.selectorNotFound(f.selector_id);
  });
  const names = new Set(layout.parameters.map((p) => p.name));
  for (const name of Object.keys(req.parameters ?? {}))
    if (!names.has(name)) errors[`parameters.${name}`] ??= MSG.parameterNotFound(name);
  return errors;
}

export async function dashboardData(
  deps: AppDeps,
  actor: Actor,
  id: number,
  req: DashboardDataRequest,
): Promise<DashboardData> {
  // Viewing as someone else is decided once, not per widget; the dashboard and its widgets are read with their rights.
  return dashboardDataAs(deps, await viewerOf(deps, actor, req.view_as_user_id), id, req);
}

/** Dashboard data read by a viewer already known. */
async function dashboardDataAs(
  deps: AppDeps,
  viewer: Viewer,
  id: number,
  req: Omit<DashboardDataRequest, 'view_as_user_id'>,
  paging: DashboardDataPaging = {},
): Promise<DashboardData> {
  const { row } = await readableObject(deps.db, viewer.actor, 'dashboard', id);
  return dashboardDataOf(deps, viewer, await dashboardDataSource(deps, layoutOf(row.layout)), req, paging);
}

/** What dashboard data needs of the dashboard: its layout and the fields its selectors filter on. */
export interface DashboardDataSource {
  layout: DashboardLayout;
  refs: Awaited<ReturnType<typeof selectorFieldRefs>>;
}

/** The layout and selector fields of a dashboard the viewer may read (a share link keeps them between requests). */
export async function dashboardDataSource(deps: AppDeps, layout: DashboardLayout): Promise<DashboardDataSource> {
  return {
    layout,
    refs: await selectorFieldRefs(
      deps.db,
      layout.selectors.map((s) => s.field_id),
    ),
  };
}

/** Dashboard data over a layout already loaded (and found readable by the viewer). */
export async function dashboardDataOf(
  deps: AppDeps,
  viewer: Viewer,
  { layout, refs }: DashboardDataSource,
  req: Omit<DashboardDataRequest, 'view_as_user_id'>,
  paging: DashboardDataPaging = {},
): Promise<DashboardData> {
  const problems = requestProblems(layout, req);
  if (Object.keys(problems).length) throw invalid(problems);

  const chosen = new Map(req.filters.map((f) => [f.selector_id, f.values]));
  const filterOf = (s: DashboardSelector): FilterSpec | undefined => {
    const values = chosen.get(s.id) ?? s.values;
    const field = refs.get(s.field_id);
    const takesNoValues = s.op === 'is_null' || s.op === 'is_not_null';
    if (!field || (!values.length && !takesNoValues)) return undefined;
    return { sql: fieldRef(field), op: s.op, values };
  };

  const widgetIds = req.widget_ids.length ? [...new Set(req.widget_ids)] : widgetIdsOf(layout);
  const requests = widgetIds.map((widgetId) => {
    const filters = layout.selectors
      .filter((s) => s.widget_ids.includes(widgetId))
      .map(filterOf)
      .filter((f): f is FilterSpec => f !== undefined);
    const parameters: ParameterValues = {};
    for (const p of layout.parameters)
      if (p.widget_ids.includes(widgetId))
        parameters[p.name] = req.parameters && p.name in req.parameters ? req.parameters[p.name] : p.value;
    return {
      id: widgetId,
      req: {
        filters,
        parameters,
        page: paging.page ?? 1,
        page_size: paging.page_size ?? DEFAULT_PAGE_SIZE,
        ...(paging.sorts ? { sorts: paging.sorts } : {}),
      },
    };
  });
  const answers = await widgetsDataAs(deps, viewer, requests, WIDGET_CONCURRENCY);
  const widgets = answers.map((a, i): WidgetDataEntry => {
    if (a.status === 'fulfilled') return { widget_id: widgetIds[i], data: a.value };
    const d = describeError(a.reason);
    const error: { code: number; message: string; errors?: FieldErrors } = { code: d.status, message: d.message };
    if (d.errors && Object.keys(d.errors).length) error.errors = d.errors;
    return { widget_id: widgetIds[i], error };
  });
  return { widgets };
}
