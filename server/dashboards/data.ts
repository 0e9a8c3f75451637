import { readableObject } from '../access/object-access';
import { viewerOf } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { describeError } from '../kernel/error-response';
import { invalid, type FieldErrors } from '../kernel/errors';
import { formatFieldPath } from '../kernel/validation';
import { DEFAULT_PAGE_SIZE, type FilterSpec, type ParameterValues } from '../query/compile/types';
import { widgetDataAs, type WidgetData } from '../widgets/widget-data';
import { layoutOf, widgetIdsOf, type DashboardLayout, type DashboardSelector } from './layout';
import { MSG } from './messages';
import { mapBounded } from './pool';
import { selectorFieldRefs } from './store';

/*
 * POST /api/dashboard/{id}/data: the data of several of the dashboard's widgets in one call. Each widget is read as
 * POST /api/widget/{id}/data reads it (server/widgets/widget-data.ts, which goes through the one data entry point
 * server/query/read.ts, with its result cache and single-flight), with the filters of the selectors and the values
 * of the dashboard parameters that drive it. Widgets run concurrently, a few at a time; one that fails gets an error
 * entry (the envelope's error) and the others still answer.
 */

/** At most this many widget reads of one call run at once (each holds a source connection while it runs). */
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
  const viewer = await viewerOf(deps, actor, req.view_as_user_id);
  const { row } = await readableObject(deps.db, viewer.actor, 'dashboard', id);
  const layout = layoutOf(row.layout);
  const problems = requestProblems(layout, req);
  if (Object.keys(problems).length) throw invalid(problems);

  const chosen = new Map(req.filters.map((f) => [f.selector_id, f.values]));
  const refs = await selectorFieldRefs(
    deps.db,
    layout.selectors.map((s) => s.field_id),
  );
  const filterOf = (s: DashboardSelector): FilterSpec | undefined => {
    const values = chosen.get(s.id) ?? s.values;
    const field = refs.get(s.field_id);
    const takesNoValues = s.op === 'is_null' || s.op === 'is_not_null';
    if (!field || (!values.length && !takesNoValues)) return undefined;
    return { sql: fieldRef(field), op: s.op, values };
  };

  const widgetIds = req.widget_ids.length ? [...new Set(req.widget_ids)] : widgetIdsOf(layout);
  const widgets = await mapBounded(widgetIds, WIDGET_CONCURRENCY, async (widgetId): Promise<WidgetDataEntry> => {
    const filters = layout.selectors
      .filter((s) => s.widget_ids.includes(widgetId))
      .map(filterOf)
      .filter((f): f is FilterSpec => f !== undefined);
    const parameters: ParameterValues = {};
    for (const p of layout.parameters)
      if (p.widget_ids.includes(widgetId))
        parameters[p.name] = req.parameters && p.name in req.parameters ? req.parameters[p.name] : p.value;
    try {
      const data = await widgetDataAs(deps, viewer, widgetId, {
        filters,
        parameters,
        page: 1,
        page_size: DEFAULT_PAGE_SIZE,
      });
      return { widget_id: widgetId, data };
    } catch (err) {
      const d = describeError(err);
      const error: { code: number; message: string; errors?: FieldErrors } = { code: d.status, message: d.message };
      if (d.errors && Object.keys(d.errors).length) error.errors = d.errors;
      return { widget_id: widgetId, error };
    }
  });
  return { widgets };
}
