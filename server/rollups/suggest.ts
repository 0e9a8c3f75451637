import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readableIds, readableObject } from '../access/object-access';
import { rlsRules } from '../access/dataset-security/rule-stores';
import { dashboardsNamingWidgets, loadFullDashboard } from '../dashboards/store';
import { layoutOf } from '../dashboards/layout';
import { loadDatasetModel, type DatasetRow } from '../datasets/load-model';
import { configOf, widgetsOnDatasets } from '../widgets/views';
import { loadFullWidget } from '../widgets/store';
import type { DatasetField, DatasetModel } from '../query/compile/dataset-model';
import type { CalculatedFieldDef, ShelfField, WidgetQueryInput } from '../query/compile/types';
import { children, lookupFunction, parseExpression, type Expr } from '../query/expr';
import { readData } from '../query/read';
import { GRANULARITIES } from './definitions';
import { datasetDefinitions, fieldRef, isTemporal } from './fields';
import { MSG } from './messages';
import type { Granularity, RollupAggregation } from './types';

/*
 * POST /api/dataset/{id}/rollups/suggest: rollups that would answer the dataset's saved widgets. Each widget's needs
 * are read from its saved configuration: its categories (with DATETRUNC granularities), the fields its filters, the
 * selectors driving it on dashboards and the dataset's row rules name (kept as dimensions, so a rollup can apply
 * them), and its measures as SUM/COUNT/MIN/MAX/AVG of fields. Widgets with the same dimensions share a rollup; a
 * rollup whose dimensions another's cover is merged into it; then pairs are merged while the union stays small.
 * Rows are estimated as the product of the dimensions' distinct counts (one grouped read through the data entry
 * point, as the caller), capped by the dataset's row count.
 */

const ORDER: Record<Granularity, number> = { day: 0, week: 1, month: 2, quarter: 3, year: 4 };

/** Whether values kept at `kept` (null: the raw value) give the values at `asked`. */
function serves(kept: Granularity | null, asked: Granularity | null): boolean {
  if (kept === null) return true;
  if (asked === null) return false;
  if (kept === asked || kept === 'day') return true;
  if (kept === 'week' || asked === 'week') return false;
  return ORDER[kept] <= ORDER[asked];
}

/** The coarsest granularity that serves both. */
function finestOf(a: Granularity | null, b: Granularity | null): Granularity | null {
  if (serves(a, b)) return a;
  if (serves(b, a)) return b;
  return a === null || b === null ? null : 'day';
}

type Dims = Map<number, Granularity | null>;
interface Measure {
  fieldId: number;
  aggregation: RollupAggregation;
}

interface Need {
  widgetId: number;
  dims: Dims;
  measures: Map<string, Measure>;
}

class NotServed extends Error {}

const isField = (x: DatasetField | Expr | null): x is DatasetField =>
  x !== null && 'id' in x && typeof x.id === 'number';

function addDim(dims: Dims, fieldId: number, g: Granularity | null): void {
  dims.set(fieldId, dims.has(fieldId) ? finestOf(dims.get(fieldId)!, g) : g);
}

/** What one widget needs of a rollup, or why none can answer it. */
function needOf(
  model: DatasetModel,
  widgetId: number,
  config: ReturnType<typeof configOf>,
  extraFields: number[],
): Need | string {
  const calcDefs = new Map<string, CalculatedFieldDef>(config.calculated_fields.map((d) => [d.name, d]));
  const params = new Set(model.parameters.map((p) => p.name));
  const fieldByRef = (e: Expr, seen: string[]): DatasetField | Expr | null => {
    if (e.kind === 'column_ref') {
      const object = model.objects.find((o) => o.name === e.table);
      const f = model.fields.find((x) => x.objectId === object?.id && x.name === e.field);
      if (!f) throw new NotServed(MSG.notServedExpression(`[${e.table}.${e.field}]`));
      return f;
    }
    if (e.kind === 'calc_ref') {
      if (params.has(e.name)) throw new NotServed(MSG.notServedParameter);
      if (seen.includes(e.name)) throw new NotServed(MSG.notServedExpression(`[${e.name}]`));
      const def = calcDefs.get(e.name);
      if (def) return parseExpression(def.sql);
      const f = model.fields.find((x) => x.objectId === null && x.name === e.name);
      if (!f) throw new NotServed(MSG.notServedExpression(`[${e.name}]`));
      if (f.formula && aggregates(parseExpression(f.formula))) return parseExpression(f.formula);
      return f;
    }
    return null;
  };
  const aggregates = (e: Expr): boolean =>
    (e.kind === 'call' && lookupFunction(e.name)?.aggregate === true) || children(e).some(aggregates);
  const dims: Dims = new Map();
  const measures = new Map<string, Measure>();
  let countsRows = false;

  /** Every field a per-row expression reads, kept raw (or truncated as DATETRUNC asks). */
  const categories = (e: Expr, seen: string[] = []): void => {
    if (e.kind === 'call' && e.name.toUpperCase() === 'DATETRUNC' && e.args.length === 2) {
      const unit = e.args[0];
      const inner = fieldByRef(e.args[1], seen);
      const g = unit.kind === 'literal' && unit.type === 'string' ? unit.value.toLowerCase() : '';
      if (isField(inner) && isTemporal(inner)) {
        addDim(dims, inner.id, GRANULARITIES.includes(g as Granularity) ? (g as Granularity) : null);
        return;
      }
    }
    if (e.kind === 'call' && lookupFunction(e.name)?.aggregate) throw new NotServed(MSG.notServedMeasure(e.name));
    const resolved = fieldByRef(e, seen);
    if (isField(resolved)) {
      addDim(dims, resolved.id, null);
      return;
    }
    if (resolved) return categories(resolved as Expr, e.kind === 'calc_ref' ? [...seen, e.name] : seen);
    children(e).forEach((c) => categories(c, seen));
  };

  /** The aggregates of a measure expression, each over one field. */
  const measuresOf = (e: Expr, seen: string[] = []): void => {
    if (e.kind === 'call' && lookupFunction(e.name)?.aggregate) {
      const name = e.name.toUpperCase();
      // COUNT() of rows: every rollup keeps its groups' row counts.
      if (name === 'COUNT' && e.args.length === 0) {
        countsRows = true;
        return;
      }
      if (!['SUM', 'COUNT', 'MIN', 'MAX', 'AVG'].includes(name) || e.args.length !== 1)
        throw new NotServed(MSG.notServedMeasure(e.args.length ? name : `${name}()`));
      let arg: DatasetField | Expr | null = fieldByRef(e.args[0], seen);
      while (arg && !isField(arg) && (arg.kind === 'calc_ref' || arg.kind === 'column_ref'))
        arg = fieldByRef(arg, seen);
      if (!isField(arg)) throw new NotServed(MSG.notServedExpression(`${name}(…)`));
      const f = arg;
      const aggregation = name as RollupAggregation;
      measures.set(`${f.id}:${aggregation}`, { fieldId: f.id, aggregation });
      return;
    }
    if (e.kind === 'column_ref' || e.kind === 'calc_ref') {
      const resolved = fieldByRef(e, seen);
      if (isField(resolved)) {
        // A bare field on the measure shelf: its default aggregation.
        const f = resolved;
        const agg = f.aggregation === 'none' ? null : f.aggregation.toUpperCase();
        if (agg === 'COUNTD') throw new NotServed(MSG.notServedMeasure('COUNTD'));
        if (!agg) throw new NotServed(MSG.notServedExpression(`[${f.name}]`));
        measures.set(`${f.id}:${agg}`, { fieldId: f.id, aggregation: agg as RollupAggregation });
        return;
      }
      if (resolved) return measuresOf(resolved as Expr, e.kind === 'calc_ref' ? [...seen, e.name] : seen);
    }
    children(e).forEach((c) => measuresOf(c, seen));
  };

  const exprOf = (f: ShelfField): Expr =>
    f.sql && f.sql.trim()
      ? parseExpression(f.sql)
      : parseExpression(f.table ? `[${f.table}.${f.field}]` : `[${f.field}]`);
  try {
    for (const f of [...config.rows, ...config.series]) categories(exprOf(f));
    for (const f of config.columns) measuresOf(exprOf(f));
    for (const filter of config.filters) categories(parseExpression(filter.sql));
  } catch (e) {
    if (e instanceof NotServed) return e.message;
    return MSG.notServedExpression(e instanceof Error ? e.message : String(e));
  }
  if (measures.size === 0 && !countsRows) return MSG.notServedHidden;
  for (const id of extraFields) addDim(dims, id, null);
  return { widgetId, dims, measures };
}

export interface Suggestion {
  name: string;
  dimensions: { field_id: number; granularity: Granularity | null }[];
  measures: { field_id: number; aggregation: RollupAggregation }[];
  widgets: number[];
  dashboards: number[];
  widget_count: number;
  estimated_rows: number;
}

export interface SuggestAnswer {
  suggestions: Suggestion[];
  not_served: { widget_id: number; reason: string }[];
}

interface Group {
  dims: Dims;
  measures: Map<string, Measure>;
  widgets: number[];
  estimate: number;
}

const dimsKey = (dims: Dims) =>
  [...dims.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([f, g]) => `${f}:${g}`)
    .join(',');

function covers(big: Dims, small: Dims): boolean {
  for (const [f, g] of small) if (!big.has(f) || !serves(big.get(f)!, g)) return false;
  return true;
}

function union(a: Dims, b: Dims): Dims {
  const out = new Map(a);
  for (const [f, g] of b) addDim(out, f, g);
  return out;
}

/** A merged rollup may be this much larger than the larger of its two parts (or this many rows), no more. */
const MERGE_FACTOR = 2;
const MERGE_SMALL_ROWS = 10_000;

export async function suggestRollups(deps: AppDeps, actor: Actor, datasetId: number): Promise<SuggestAnswer> {
  const { row } = await readableObject(deps.db, actor, 'dataset', datasetId);
  const dataset = row as DatasetRow;
  const model = await loadDatasetModel(deps.db, datasetId);
  const refs = await widgetsOnDatasets(deps.db, [datasetId], 'id');
  const visible = await readableIds(
    deps.db,
    actor,
    'widget',
    refs.map((w) => w.id),
  );
  const rlsFields = [...new Set((await rlsRules.list(deps.db, datasetId)).map((r) => r.fieldId))];
  const dashboardsOf = new Map<number, number[]>();
  const selectorFields = new Map<number, number[]>();
  const widgetIds = refs.filter((w) => visible.has(w.id)).map((w) => w.id);
  const boards = await dashboardsNamingWidgets(deps.db, widgetIds);
  const readableBoards = await readableIds(
    deps.db,
    actor,
    'dashboard',
    boards.map((b) => b.id),
  );
  for (const b of boards) {
    const layout = layoutOf((await loadFullDashboard(deps.db, b.id)).layout);
    for (const item of layout.items)
      if (readableBoards.has(b.id))
        dashboardsOf.set(item.widget_id, [...(dashboardsOf.get(item.widget_id) ?? []), b.id]);
    for (const s of layout.selectors)
      for (const w of s.widget_ids) selectorFields.set(w, [...(selectorFields.get(w) ?? []), s.field_id]);
  }

  const notServed: SuggestAnswer['not_served'] = [];
  const groups = new Map<string, Group>();
  for (const id of widgetIds) {
    const widget = await loadFullWidget(deps.db, id);
    const extra = [...rlsFields, ...(selectorFields.get(id) ?? [])].filter((f) => model.fields.some((x) => x.id === f));
    const need = needOf(model, id, configOf(widget), extra);
    if (typeof need === 'string') {
      notServed.push({ widget_id: id, reason: need });
      continue;
    }
    const key = dimsKey(need.dims);
    const g: Group = groups.get(key) ?? { dims: need.dims, measures: new Map(), widgets: [], estimate: 0 };
    for (const [k, m] of need.measures) g.measures.set(k, m);
    g.widgets.push(id);
    groups.set(key, g);
  }

  const estimator = await distinctCounts(
    deps,
    actor,
    dataset,
    model,
    [...groups.values()].map((g) => g.dims),
  );
  let list = [...groups.values()];
  for (const g of list) g.estimate = estimator(g.dims);
  // A group whose dimensions another covers goes into it (the smallest covering one).
  list.sort((a, b) => a.dims.size - b.dims.size);
  for (let i = 0; i < list.length; i++) {
    const small = list[i];
    const into = list
      .filter((big, j) => j !== i && big.widgets.length && covers(big.dims, small.dims) && big !== small)
      .sort((a, b) => a.estimate - b.estimate)[0];
    if (!into || !small.widgets.length) continue;
    for (const [k, m] of small.measures) into.measures.set(k, m);
    into.widgets.push(...small.widgets);
    small.widgets = [];
  }
  list = list.filter((g) => g.widgets.length);
  // Pairs whose union stays small.
  for (let merged = true; merged;) {
    merged = false;
    outer: for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const dims = union(list[i].dims, list[j].dims);
        const estimate = estimator(dims);
        if (estimate > Math.max(MERGE_SMALL_ROWS, MERGE_FACTOR * Math.max(list[i].estimate, list[j].estimate)))
          continue;
        const g: Group = {
          dims,
          measures: new Map([...list[i].measures, ...list[j].measures]),
          widgets: [...list[i].widgets, ...list[j].widgets],
          estimate,
        };
        list = [...list.filter((_, k) => k !== i && k !== j), g];
        merged = true;
        break outer;
      }
  }

  const title = (id: number) => {
    const f = model.fields.find((x) => x.id === id);
    return f ? f.title || f.name : `id ${id}`;
  };
  const suggestions = list.map((g): Suggestion => {
    const avg = new Set([...g.measures.values()].filter((m) => m.aggregation === 'AVG').map((m) => m.fieldId));
    const measures = [...g.measures.values()]
      .filter((m) => !(avg.has(m.fieldId) && (m.aggregation === 'SUM' || m.aggregation === 'COUNT')))
      .sort((a, b) => a.fieldId - b.fieldId || a.aggregation.localeCompare(b.aggregation))
      .map((m) => ({ field_id: m.fieldId, aggregation: m.aggregation }));
    const dimensions = [...g.dims.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([field_id, granularity]) => ({ field_id, granularity }));
    const widgets = [...g.widgets].sort((a, b) => a - b);
    const dashboards = [...new Set(widgets.flatMap((w) => dashboardsOf.get(w) ?? []))].sort((a, b) => a - b);
    return {
      name: dimensions.length
        ? `По ${dimensions.map((d) => (d.granularity ? `${title(d.field_id)} (${d.granularity})` : title(d.field_id))).join(', ')}`
        : 'Итоги',
      dimensions,
      measures,
      widgets,
      dashboards,
      widget_count: widgets.length,
      estimated_rows: g.estimate,
    };
  });
  suggestions.sort((a, b) => b.widget_count - a.widget_count || a.estimated_rows - b.estimated_rows);
  return { suggestions, not_served: notServed };
}

/**
 * The distinct count of every (field, granularity) the groups use and the dataset's row count, read in ONE grouped
 * read through the data entry point as the caller; the estimate of a set of dimensions is the product of their counts
 * capped by the row count. A read that fails (the source down) estimates nothing: the row count for every group.
 */
async function distinctCounts(
  deps: AppDeps,
  actor: Actor,
  dataset: DatasetRow,
  model: DatasetModel,
  sets: Dims[],
): Promise<(dims: Dims) => number> {
  const wanted = new Map<string, { fieldId: number; g: Granularity | null }>();
  const remember = (dims: Dims) => {
    for (const [fieldId, g] of dims) wanted.set(`${fieldId}:${g}`, { fieldId, g });
  };
  sets.forEach(remember);
  // The merges ask for unions, whose granularities are among these or a finer one: day and raw too.
  for (const { fieldId } of [...wanted.values()]) {
    const f = model.fields.find((x) => x.id === fieldId);
    if (f && isTemporal(f)) {
      wanted.set(`${fieldId}:day`, { fieldId, g: 'day' });
      wanted.set(`${fieldId}:null`, { fieldId, g: null });
    }
  }
  const keys = [...wanted.keys()];
  const columns: ShelfField[] = [{ id: 'rows', sql: 'COUNT()' }];
  keys.forEach((k, i) => {
    const { fieldId, g } = wanted.get(k)!;
    const f = model.fields.find((x) => x.id === fieldId)!;
    const ref = fieldRef(model, f);
    columns.push({ id: `c${i}`, sql: `COUNTD(${g ? `DATETRUNC('${g}', ${ref})` : ref})` });
  });
  const query: WidgetQueryInput = {
    type: 'kpi',
    rows: [],
    series: [],
    columns,
    filters: [],
    sorts: [],
    calculatedFields: datasetDefinitions(model),
    parameters: {},
    page: 1,
    pageSize: 1,
  };
  const counts = new Map<string, number>();
  let total = Number.MAX_SAFE_INTEGER;
  try {
    const viewer = { actor, requestedBy: actor, reason: 'self' as const };
    const result = await readData(deps, viewer, dataset, { kind: 'widget', query });
    const first = result.rows[0] ?? [];
    const at = new Map(result.query.columns.map((c, i) => [c.key, i]));
    total = Number(first[at.get('rows')!] ?? 0);
    keys.forEach((k, i) => counts.set(k, Number(first[at.get(`c${i}`)!] ?? 0) + 1)); // +1: NULL is a group too
  } catch {
    // no estimate
  }
  return (dims) => {
    let n = 1;
    for (const [fieldId, g] of dims) {
      n *= counts.get(`${fieldId}:${g}`) ?? counts.get(`${fieldId}:day`) ?? total;
      if (n >= total) return total;
    }
    return Math.min(n, total);
  };
}
