import type { DatasetField, DatasetModel, DatasetObject } from '../compile/dataset-model';
import { assembleQuery } from '../compile/assemble';
import { call, columnRef } from '../compile/ast-tools';
import type { Condition } from '../compile/conditions';
import { scopeFor } from '../compile/compile-widget';
import { QueryScope } from '../compile/scope';
import { analyzeShelves, type SelectItem } from '../compile/shelves';
import { KPI_KIND, MAX_PAGE_SIZE, type CompiledQuery, type FilterSpec, type WidgetQueryInput } from '../compile/types';
import {
  children,
  compileFilter,
  isAggregate,
  mapChildren,
  parseExpression,
  type CompileContext,
  type Dialect,
  type Expr,
  type PrimitiveType,
} from '../expr';
import { isAggregateCall } from '../expr/analysis';
import type { Granularity, RollupMeasure, ServedRollup } from '../../rollups/types';
import { ROLLUP_TABLE, ROWS_COLUMN, isTextType, ordersTextAsBytes, rankColumn } from '../../rollups/types';

/*
 * Matching a widget request with the rollups of its dataset, and the request rewritten for the one that answers it.
 * Pure: the caller hands the model AFTER the viewer's security (securedRead: row rules among the model's filters,
 * hidden fields flagged) and the dataset's servable rollups; nothing is read or run here.
 *
 * Every expression of the request (shelves, request and saved filters, the dataset's filters and row rules) is
 * expanded until it names physical columns only: calculated fields by their definitions, parameters by their values
 * for this request. A rollup's dimension is its field's expansion (truncated to its granularity), a measure its
 * field's expansion under the aggregation. The request is answered from the rollup only when each of its expressions
 * can be written over those columns EXACTLY:
 * - a value (category, WHERE condition) is made of dimensions, literals and functions of them; a date function of a
 *   date dimension truncated to a granularity only when the function cannot tell two dates of one period apart
 *   (MONTH or DATETRUNC('quarter', …) of a day or month, never of a week); a column that is not a dimension: no match;
 * - a filter on a raw date kept only truncated: when its bounds are period boundaries (>= or < a period's first day,
 *   BETWEEN a first and a last day), compared on the period start; NULL tests always; anything else: no match;
 * - an aggregate is SUM(x) <- SUM(sum), COUNT(x) <- SUM(count) (0 for no rows, as COUNT), COUNT() <- SUM(n),
 *   MIN(x) <- MIN(min), MAX(x) <- MAX(max), AVG(x) <- SUM(sum)/SUM(count), x being a measure's field; MIN/MAX of a
 *   value made of dimensions stay as they are; COUNT DISTINCT and any aggregate of anything else: no match;
 * - text as the source compares it: DuckDB compares bytes, PostgreSQL and MySQL by the column's collation. A text
 *   dimension is ordered by its rank in the source's order (kept by the build); ordering by any other text, ranges
 *   and MIN/MAX over text: no match unless the source compares bytes too (ClickHouse, DuckDB). MySQL's collations
 *   mostly ignore case, so there any text comparison and any text value but a bare dimension: no match;
 * - a request without aggregates (a listing of rows) never matches;
 * - a dimension or measure whose own definition reads a parameter never matches (the rollup holds one value of it).
 * The smallest rollup (fewest rows) that matches answers; none: the caller reads as before, silently.
 */

/** The object id of the rollup's one table in the synthetic model the rewritten request is compiled against. */
const ROLLUP_OBJECT_ID = 1;

/** Filter subjects are compiled under this name (as the dataset's filters are in conditions.ts). */
const SUBJECT = '\u0000rollup filter subject';

export interface RollupPlan {
  served: ServedRollup;
  /** The request compiled for DuckDB over the rollup's table: the same output columns (keys, aliases, order). */
  query: CompiledQuery;
  /**
   * Output columns holding the start of a period (a truncated date dimension, DATETRUNC of one): each source answers
   * them in its own type (PostgreSQL and DuckDB a timestamp, MySQL and ClickHouse a date), so the rollup's answer is
   * given the live source's (read-rollup.ts).
   */
  periodColumns: number[];
  /** Output columns holding an average as the text 'sum/count', divided by the reader as the source divides. */
  averageColumns: number[];
}

/** Thrown inside matching when a request cannot be answered exactly; caught by matchRollup. */
class NoMatch extends Error {}

const fail = (why: string): never => {
  throw new NoMatch(why);
};

/** The first rollup (by fewest rows) that answers the request exactly, compiled; null when none does. */
export function matchRollup(
  model: DatasetModel,
  input: WidgetQueryInput,
  rollups: readonly ServedRollup[],
  opts: MatchOptions = {},
): RollupPlan | null {
  if (rollups.length === 0) return null;
  let request: ExpandedRequest;
  try {
    request = expandRequest(model, input, opts);
  } catch {
    return null; // not one the compiler accepts either: the live read reports it
  }
  const bySize = [...rollups].sort((a, b) => a.load.rows - b.load.rows);
  for (const served of bySize) {
    try {
      return { served, ...rewriteFor(request, served) };
    } catch (e) {
      if (!(e instanceof NoMatch)) return null;
    }
  }
  return null;
}

export interface MatchOptions {
  /**
   * The dataset's own filters, which every build applied (the rollup holds only rows that pass them): those that read
   * no parameter need not be dimensions. Every other filter of the model (the viewer's row rules) must be.
   */
  builtFilterIds?: ReadonlySet<number>;
  /** The dialect the dataset's reads run in without rollups (text rules above); unknown: the strictest (MySQL). */
  liveDialect?: Dialect;
}

/** Why a rollup does not answer a request (tests and logs); null when it does. */
export function whyNot(
  model: DatasetModel,
  input: WidgetQueryInput,
  served: ServedRollup,
  opts: MatchOptions = {},
): string | null {
  try {
    rewriteFor(expandRequest(model, input, opts), served);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

interface ExpandedRequest {
  model: DatasetModel;
  scope: QueryScope;
  input: WidgetQueryInput;
  items: SelectItem[];
  /** WHERE/HAVING conditions: the dataset's filters (row rules included) and the request's, expanded. */
  conditions: { path: string; aggregate: boolean; subject: Expr; type: PrimitiveType; filter: FilterSpec }[];
  limit: number | undefined;
  offset: number;
  /** How the live source compares text: bytes, a collation, or a collation that ignores case (MySQL). */
  text: 'bytes' | 'collation' | 'case-insensitive';
  /**
   * How an AVG is answered: divided in DuckDB (the source averages floating point: MySQL as the compiler casts it,
   * ClickHouse, DuckDB), or as the text 'sum/count' the reader divides as PostgreSQL's numeric division rounds
   * (averages.ts).
   */
  averages: 'number' | 'text';
}

/** The request as compileWidgetQuery reads it, every expression expanded to physical columns and literals. */
function expandRequest(model: DatasetModel, input: WidgetQueryInput, opts: MatchOptions): ExpandedRequest {
  const scope = scopeFor(model, input.parameters).defineFromRequest(input.calculatedFields);
  const shelves = analyzeShelves(input, scope);
  if (!shelves.aggregates) fail('a listing of rows (no aggregate)');
  const expand = (e: Expr) => expandExpr(e, scope);
  const items = shelves.items.map((it) => ({ ...it, ast: expand(it.ast) }));
  const conditions: ExpandedRequest['conditions'] = [];
  for (const f of model.filters) {
    const field = scope.fieldById(f.fieldId) ?? fail(`dataset filter ${f.id} on a missing field`);
    if (opts.builtFilterIds?.has(f.id)) {
      // Applied by the build, with the parameters' defaults: one reading a parameter cannot be trusted.
      if (!fieldDefinition(scope, model, field)) fail(`dataset filter ${f.id} reads a parameter`);
      continue;
    }
    const subject = expand(scope.datasetFieldAst(field));
    conditions.push({
      path: `dataset filter ${f.id}`,
      aggregate: isAggregate(subject),
      subject,
      type: scope.typeOf(subject),
      filter: { sql: `[${SUBJECT}]`, op: f.op, values: f.values, value_type: f.valueType },
    });
  }
  for (const { path, filter } of input.filters) {
    const subject = expand(parseExpression(filter.sql));
    conditions.push({
      path,
      aggregate: isAggregate(subject),
      subject,
      type: scope.typeOf(subject),
      filter: { ...filter, sql: `[${SUBJECT}]` },
    });
  }
  const kpi = input.type === KPI_KIND;
  if (!kpi) {
    const { page, pageSize } = input;
    const valid = Number.isSafeInteger(page) && page >= 1 && Number.isSafeInteger(pageSize) && pageSize >= 1;
    if (!valid || pageSize > MAX_PAGE_SIZE || !Number.isSafeInteger((page - 1) * pageSize)) fail('a bad page');
  }
  return {
    model,
    scope,
    input,
    items,
    conditions,
    limit: kpi ? 1 : input.pageSize + 1,
    offset: kpi ? 0 : (input.page - 1) * input.pageSize,
    text:
      opts.liveDialect && ordersTextAsBytes(opts.liveDialect)
        ? 'bytes'
        : opts.liveDialect === 'postgresql'
          ? 'collation'
          : 'case-insensitive',
    averages: opts.liveDialect === 'postgresql' ? 'text' : 'number',
  };
}

/** [name] replaced by the parameter's value or the calculated field's definition, recursively. */
function expandExpr(e: Expr, scope: QueryScope, seen: string[] = []): Expr {
  if (e.kind === 'calc_ref') {
    if (seen.includes(e.name)) fail('a cycle of calculated fields');
    return expandExpr(scope.calculatedAst(e.name), scope, [...seen, e.name]);
  }
  return mapChildren(e, (c) => expandExpr(c, scope, seen));
}

/** A field's own definition expanded without parameters: undefined when it reads one. */
function fieldDefinition(scope: QueryScope, model: DatasetModel, field: DatasetField): Expr | undefined {
  // The dataset's own formulas; a parameter in them makes the field's value depend on the request.
  const bare = scopeFor({ ...model, parameters: [] }, undefined);
  try {
    const ast = bare.datasetFieldAst(field);
    bare.typeOf(ast);
    return ast;
  } catch {
    return undefined;
  }
}

/** A structural key of an expression: positions left out, names and units in one case. */
function keyOf(e: Expr): string {
  return JSON.stringify(e, (k, v: unknown) => {
    if (k === 'pos') return undefined;
    return v;
  });
}

function canonical(e: Expr): Expr {
  const mapped = mapChildren(e, canonical);
  if (mapped.kind === 'call') {
    const name = mapped.name.toUpperCase();
    const [first, ...rest] = mapped.args;
    const unit =
      first?.kind === 'literal' && first.type === 'string' && UNIT_FUNCTIONS.has(name)
        ? { ...first, value: first.value.toLowerCase() }
        : first;
    return { kind: 'call', name, args: first ? [unit, ...rest] : [] };
  }
  const { pos: _pos, ...rest } = mapped as Expr & { pos?: unknown };
  return rest as Expr;
}

const UNIT_FUNCTIONS = new Set(['DATETRUNC', 'DATEADD', 'DATEDIFF']);

/** For a date dimension truncated to `g`: the units a function may read it at and stay exact. */
const EXACT_OVER: Record<Granularity, { trunc: Set<string>; parts: Set<string> }> = {
  day: {
    trunc: new Set(['day', 'week', 'month', 'quarter', 'year']),
    parts: new Set(['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY']),
  },
  week: { trunc: new Set(['week']), parts: new Set(['WEEK']) },
  month: { trunc: new Set(['month', 'quarter', 'year']), parts: new Set(['YEAR', 'QUARTER', 'MONTH']) },
  quarter: { trunc: new Set(['quarter', 'year']), parts: new Set(['YEAR', 'QUARTER']) },
  year: { trunc: new Set(['year']), parts: new Set(['YEAR']) },
};

interface RollupColumns {
  /** Dimension expressions by key -> column. */
  dims: Map<string, string>;
  /** A truncated date dimension's field expression by key -> its column and granularity. */
  truncated: Map<string, { column: string; granularity: Granularity }[]>;
  /** Measure field expressions by key -> the measure's columns. */
  measures: Map<string, RollupMeasure['columns'][]>;
  /** A text dimension's column -> its rank column. */
  ranks: Map<string, string>;
  fields: DatasetField[];
}

function rollupColumns(request: ExpandedRequest, served: ServedRollup): RollupColumns {
  const { model, scope } = request;
  const out: RollupColumns = {
    dims: new Map(),
    truncated: new Map(),
    measures: new Map(),
    ranks: new Map(),
    fields: [],
  };
  const addField = (name: string, primitiveType: PrimitiveType) =>
    out.fields.push({
      id: -(out.fields.length + 1),
      objectId: ROLLUP_OBJECT_ID,
      name,
      title: name,
      kind: 'physical',
      column: name,
      formula: null,
      derivation: null,
      primitiveType,
      aggregation: 'none',
      hidden: false,
      description: '',
      sortByFieldId: null,
    });
  for (const d of served.definition.dimensions) {
    const field = model.fields.find((f) => f.id === d.fieldId);
    const base = field && fieldDefinition(scope, model, field);
    if (!base) continue; // a dimension that reads a parameter (or is gone) answers nothing
    const expr = canonical(base);
    const value = d.granularity ? canonical(call('DATETRUNC', lit(d.granularity), expr)) : expr;
    out.dims.set(keyOf(value), d.column);
    if (d.granularity) {
      const list = out.truncated.get(keyOf(expr)) ?? [];
      list.push({ column: d.column, granularity: d.granularity });
      out.truncated.set(keyOf(expr), list);
    }
    const type = scope.typeOf(value);
    addField(d.column, type);
    // The build ranks the dimensions whose field holds text (file.ts rankedDimensions).
    if (!d.granularity && isTextType(field.primitiveType) && request.text !== 'bytes') {
      out.ranks.set(d.column, rankColumn(d));
      addField(rankColumn(d), 'integer');
    }
  }
  addField(ROWS_COLUMN, 'integer');
  for (const m of served.definition.measures) {
    const field = model.fields.find((f) => f.id === m.fieldId);
    const base = field && fieldDefinition(scope, model, field);
    if (!base) continue;
    const expr = canonical(base);
    if (isAggregate(expr)) continue;
    const type = scope.typeOf(expr);
    const list = out.measures.get(keyOf(expr)) ?? [];
    list.push(m.columns);
    out.measures.set(keyOf(expr), list);
    const { sum, count, min, max } = m.columns;
    if (sum) addField(sum, type === 'integer' ? 'integer' : 'float');
    if (count) addField(count, 'integer');
    if (min) addField(min, type);
    if (max) addField(max, type);
  }
  return out;
}

const lit = (value: string): Expr => ({ kind: 'literal', type: 'string', value });
const col = (column: string): Expr => columnRef(ROLLUP_TABLE, column);

/** A value expression over the rollup's dimensions, or NoMatch. */
function rewriteValue(e: Expr, cols: RollupColumns): Expr {
  const k = keyOf(e);
  const dim = cols.dims.get(k);
  if (dim) return col(dim);
  if (e.kind === 'call' && e.args.length > 0) {
    const name = e.name;
    const unit = name === 'DATETRUNC' && e.args[0].kind === 'literal' ? String(e.args[0].value) : undefined;
    const target = e.args[e.args.length - 1];
    const coarse = cols.truncated.get(keyOf(target));
    if (coarse && (unit !== undefined || EXACT_OVER.day.parts.has(name))) {
      const fit = coarse.find(({ granularity }) =>
        unit !== undefined ? EXACT_OVER[granularity].trunc.has(unit) : EXACT_OVER[granularity].parts.has(name),
      );
      if (fit) return { ...e, args: [...e.args.slice(0, -1), col(fit.column)] };
    }
  }
  if (e.kind === 'column_ref') fail(`[${e.table}.${e.field}] is not a dimension of the rollup`);
  if (isAggregateCall(e)) fail('an aggregate in a value');
  return mapChildren(e, (c) => rewriteValue(c, cols));
}

/**
 * A fractional measure's aggregate as the double nearest its value: DuckDB casts a DECIMAL to DOUBLE by dividing a
 * rounded double by a power of ten (one step off at times), where the sources (and the connectors) read its text.
 * A DOUBLE column reads back as itself.
 */
function nearestDouble(e: Expr, cols: RollupColumns, column: string): Expr {
  const type = cols.fields.find((f) => f.column === column)?.primitiveType;
  return type === 'float' ? call('FLOAT', call('STR', e)) : e;
}

/**
 * An aggregating expression over the rollup's measures (re-aggregated) and dimensions, or NoMatch. `avg`: how an AVG
 * may be answered here ('text' only as a whole output column, 'none' where the source's DECIMAL division decides).
 */
function rewriteAggregate(e: Expr, cols: RollupColumns, avg: 'number' | 'text' | 'none'): Expr {
  if (!isAggregateCall(e)) {
    if (e.kind === 'column_ref') fail('a column outside an aggregate');
    const inner = avg === 'text' ? 'none' : avg;
    return mapChildren(e, (c) => rewriteAggregate(c, cols, inner));
  }
  // COUNT() counts rows: the groups' row counts added up (0 for no rows, as COUNT).
  if (e.name === 'COUNT' && e.args.length === 0) return call('ZN', call('SUM', col(ROWS_COLUMN)));
  if (e.args.length !== 1) fail(`${e.name}() over no field`);
  const [x] = e.args;
  const measures = cols.measures.get(keyOf(x)) ?? [];
  const has = (c: keyof RollupMeasure['columns']) => measures.find((m) => m[c])?.[c];
  switch (e.name) {
    case 'SUM': {
      const sum = has('sum') ?? fail('SUM of what the rollup does not sum');
      return nearestDouble(call('SUM', col(sum)), cols, sum);
    }
    case 'COUNT': {
      const count = has('count') ?? fail('COUNT of what the rollup does not count');
      // COUNT answers 0 over no rows; SUM answers NULL.
      return call('ZN', call('SUM', col(count)));
    }
    case 'AVG': {
      const sum = has('sum');
      const count = has('count');
      if (!sum || !count) fail('AVG of what the rollup does not sum and count');
      if (avg === 'none') fail('an AVG the source divides as DECIMAL, inside an expression or a condition');
      if (avg === 'text')
        return call('CONCAT', call('STR', call('SUM', col(sum!))), lit('/'), call('STR', call('SUM', col(count!))));
      return { kind: 'binary', op: '/', left: call('SUM', col(sum!)), right: call('SUM', col(count!)) };
    }
    case 'MIN':
    case 'MAX': {
      const c = has(e.name === 'MIN' ? 'min' : 'max');
      if (c) return nearestDouble(call(e.name, col(c)), cols, c);
      return call(e.name, rewriteValue(x, cols));
    }
    default:
      return fail(`${e.name} does not re-aggregate`);
  }
}

/** The request rewritten over one rollup and compiled for DuckDB; NoMatch when the rollup cannot answer exactly. */
function rewriteFor(
  request: ExpandedRequest,
  served: ServedRollup,
): Pick<RollupPlan, 'query' | 'periodColumns' | 'averageColumns'> {
  const cols = rollupColumns(request, served);
  const sorted = new Set(request.input.sorts.map((s) => s.field_id));
  const averageColumns: number[] = [];
  const items = request.items.map((it, i) => {
    if (!it.aggregate) return { ...it, ast: rewriteValue(canonical(it.ast), cols) };
    // An average of the source's DECIMAL division: a whole output column the reader divides, never sorted on.
    const avg = request.averages === 'number' ? 'number' : sorted.has(it.key) ? 'none' : 'text';
    const ast = rewriteAggregate(canonical(it.ast), cols, avg);
    if (ast.kind === 'call' && ast.name === 'CONCAT') averageColumns.push(i);
    return { ...it, ast };
  });
  const periodColumns = items.flatMap((it, i) => {
    const e = it.ast;
    const period =
      (e.kind === 'call' && e.name === 'DATETRUNC') ||
      (e.kind === 'column_ref' && served.definition.dimensions.some((d) => d.column === e.field && d.granularity));
    return period ? [i] : [];
  });
  const condition = (path: string, aggregate: boolean, ast: Expr, filter: FilterSpec): Condition => ({
    path,
    aggregate,
    ast,
    compile: (ctx: CompileContext) =>
      compileFilter(filter, { ...ctx, calculated: (name) => (name === SUBJECT ? ast : ctx.calculated(name)) }),
  });
  const conditions: Condition[] = request.conditions.flatMap(({ path, aggregate, subject, type, filter }) => {
    if (type === 'string' && !textFilterExact(filter.op, request.text)) fail(`${path}: text compared by collation`);
    const e = canonical(subject);
    const avg = request.averages === 'number' ? 'number' : 'none';
    if (aggregate) return [condition(path, true, rewriteAggregate(e, cols, avg), filter)];
    try {
      return [condition(path, false, rewriteValue(e, cols), filter)];
    } catch (err) {
      // A date compared with period boundaries: the same rows pass when its period start is compared instead.
      const kept = cols.truncated.get(keyOf(e));
      if (!(err instanceof NoMatch) || !kept || (type !== 'date' && type !== 'datetime')) throw err;
      for (const { column, granularity } of kept) {
        const pieces = periodFilter(filter, granularity, type);
        if (pieces) return pieces.map((f) => condition(path, false, col(column), f));
      }
      throw err;
    }
  });
  const model = rollupModel(request.model, cols.fields);
  const scope = new QueryScope(model, new Map(), new Map());
  for (const it of items) scope.typeOf(it.ast);
  for (const c of conditions) scope.typeOf(c.ast!);
  if (request.text !== 'bytes') {
    for (const it of items) checkTextComparisons(it.ast, scope, request.text);
    for (const c of conditions) checkTextComparisons(c.ast!, scope, request.text);
  }
  const query = assembleQuery(
    {
      scope,
      items,
      grouped: true,
      conditions,
      sorts: request.input.sorts,
      limit: request.limit,
      offset: request.offset,
      orderBy: textOrder(request, items, sorted, scope, cols),
    },
    () => 'duckdb',
  );
  return { query, periodColumns, averageColumns };
}

/** Filter operators on text that let the same rows pass in DuckDB as at the source. */
function textFilterExact(op: string, text: ExpandedRequest['text']): boolean {
  if (text === 'bytes' || op === 'is_null' || op === 'is_not_null') return true;
  if (text === 'case-insensitive') return false;
  return !['gt', 'gte', 'lt', 'lte', 'between'].includes(op);
}

const ORDERING_OPS = new Set(['<', '<=', '>', '>=']);

/** NoMatch when the expression compares or picks text in a way the source's collation may decide otherwise. */
function checkTextComparisons(e: Expr, scope: QueryScope, text: ExpandedRequest['text']): void {
  const isText = (x: Expr) => scope.typeOf(x) === 'string';
  const visit = (x: Expr): void => {
    const ci = text === 'case-insensitive';
    if (x.kind === 'binary' && (ORDERING_OPS.has(x.op) || (ci && (x.op === '=' || x.op === '!=')))) {
      if (isText(x.left) || isText(x.right)) fail('text compared by collation');
    }
    if ((x.kind === 'between' || (ci && x.kind === 'in')) && isText(x.expr)) fail('text compared by collation');
    if (x.kind === 'call' && (x.name === 'MIN' || x.name === 'MAX') && x.args.length === 1 && isText(x.args[0]))
      fail('MIN/MAX of text');
    children(x).forEach(visit);
  };
  visit(e);
}

/**
 * The ORDER BY of text items as the source orders them: a text dimension by its rank (MIN of it: one per group);
 * any other text item ordered (every group key is, as a tie-breaker) only where the source orders bytes too.
 */
function textOrder(
  request: ExpandedRequest,
  items: SelectItem[],
  sorted: ReadonlySet<string>,
  scope: QueryScope,
  cols: RollupColumns,
): Map<number, Expr> {
  const orderBy = new Map<number, Expr>();
  items.forEach((it, i) => {
    if ((it.aggregate && !sorted.has(it.key)) || scope.typeOf(it.ast) !== 'string') return;
    const rank = it.ast.kind === 'column_ref' ? cols.ranks.get(it.ast.field) : undefined;
    if (rank) orderBy.set(i, call('MIN', col(rank)));
    else if (request.text !== 'bytes') fail('ordered by text the rollup cannot order as the source');
  });
  return orderBy;
}

const DAY_TEXT = /^(\d{4})-(\d{2})-(\d{2})(?:[ T]00:00(?::00(?:\.0+)?)?)?$/;

/** A filter value as a day (a date, or a datetime at midnight); undefined for anything else. */
function dayOf(v: unknown): Date | undefined {
  const m = typeof v === 'string' ? DAY_TEXT.exec(v) : null;
  if (!m) return undefined;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCDate() === +m[3] ? d : undefined;
}

/** Whether a day is the first of its period (weeks start on Monday, as DATETRUNC's do). */
function startsPeriod(d: Date, g: Granularity): boolean {
  const month = d.getUTCMonth();
  switch (g) {
    case 'day':
      return true;
    case 'week':
      return d.getUTCDay() === 1;
    case 'month':
      return d.getUTCDate() === 1;
    case 'quarter':
      return d.getUTCDate() === 1 && month % 3 === 0;
    case 'year':
      return d.getUTCDate() === 1 && month === 0;
  }
}

const nextDay = (d: Date) => new Date(d.getTime() + 86_400_000);

/**
 * A filter on a date (or datetime) as filters on its start of period `g`, when they let exactly the same rows pass:
 * NULL tests always; a lower bound (>=) or an upper one (<) on a period's first day; for a date, > and <= of a
 * period's last day and BETWEEN a first and a last day. Null: not exact (say, >= the 15th of a month kept by month).
 */
function periodFilter(filter: FilterSpec, g: Granularity, type: 'date' | 'datetime'): FilterSpec[] | null {
  const op = filter.op;
  if (op === 'is_null' || op === 'is_not_null') return [filter];
  const valueType = filter.value_type;
  if (valueType !== 'date' && valueType !== 'datetime') return null;
  const values = filter.values ?? [];
  const days = values.map(dayOf);
  const text = (d: Date) => {
    const day = d.toISOString().slice(0, 10);
    return valueType === 'date' ? day : `${day} 00:00:00`;
  };
  const bound = (o: 'gte' | 'lt', d: Date): FilterSpec => ({ ...filter, op: o, values: [text(d)] });
  const start = (d: Date | undefined): d is Date => d !== undefined && startsPeriod(d, g);
  const [v] = days;
  switch (op) {
    case 'gte':
      return values.length === 1 && start(v) ? [bound('gte', v)] : null;
    case 'lt':
      return values.length === 1 && start(v) ? [bound('lt', v)] : null;
    case 'gt':
      return type === 'date' && values.length === 1 && v && start(nextDay(v)) ? [bound('gte', nextDay(v))] : null;
    case 'lte':
      return type === 'date' && values.length === 1 && v && start(nextDay(v)) ? [bound('lt', nextDay(v))] : null;
    case 'between': {
      if (values.length !== 2 || type !== 'date') return null;
      const [low, high] = days;
      const out: FilterSpec[] = [];
      if (values[0] !== null) {
        if (!start(low)) return null;
        out.push(bound('gte', low));
      }
      if (values[1] !== null) {
        if (!high || !start(nextDay(high))) return null;
        out.push(bound('lt', nextDay(high)));
      }
      return out.length ? out : null;
    }
    default:
      return null;
  }
}

/** The dataset seen as the rollup's one table: the fields are its columns (d0…, m0_sum…). */
function rollupModel(model: DatasetModel, fields: DatasetField[]): DatasetModel {
  const object: DatasetObject = {
    id: ROLLUP_OBJECT_ID,
    dataSourceId: model.objects[0]?.dataSourceId ?? 0,
    name: ROLLUP_TABLE,
    kind: 'table',
    schema: null,
    table: ROLLUP_TABLE,
    sql: null,
  };
  return {
    ...model,
    objects: [object],
    fields,
    relations: [],
    hierarchies: [],
    filters: [],
    parameters: [],
  };
}
