import { FILTER_VALUE_TYPES, filterValueLiteral, type Dialect, type FilterValueType, type Literal } from '../expr';
import type { ParamTrack } from './assemble';
import { compileWidgetQuery } from './compile-widget';
import type { DatasetModel } from './dataset-model';
import type { CompiledQuery, WidgetQueryInput } from './types';

/*
 * A widget request compiled once per shape. A dashboard sends each widget's whole configuration with the
 * selectors' filters in the body (POST /api/widget/{id}/data), so a viewer changing a selector sends the same request
 * with other filter values. Those values are bound parameters, and what they change in the SQL text is fixed by
 * little: whether a value is null, its type (a boolean is written as a keyword, an integer past 32 bits is cast to
 * bigint) and how many there are. The request with each value replaced by that is its shape; the first request of a
 * shape is compiled and kept as a template whose slots say which parameter is which value, and the next ones only put
 * their values in (the miss path compiles only what changed).
 *
 * A template is kept only when the compile proves it: every value of every slotted filter found exactly once among
 * the bound values, through the literal object compileFilter made of it (ParamTrack). Anything else (ClickHouse, which
 * writes values into the text; a filter object given twice; values compiled in some other way) keeps no template,
 * and such requests compile whole, as before.
 */

/** Operations whose every value is bound once as it is read (compileFilter); LIKE patterns are made of the value. */
const SLOTTED_OPS: ReadonlySet<string> = new Set(['in', 'not_in', 'eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'between']);

const INT32_MAX = 2 ** 31 - 1;

export interface RequestShape {
  /** The request as JSON, each slotted filter's values replaced by what decides their SQL. */
  key: string;
  /** Per filter of the request, its values read as literals, or null when its values are part of the key. */
  literals: readonly ((Literal | null)[] | null)[];
}

/** One bound value of a template: the parameter's position, and which filter's which value it is. */
interface Slot {
  param: number;
  filter: number;
  value: number;
}

export interface PlanTemplate {
  query: CompiledQuery;
  slots: readonly Slot[];
}

/**
 * The request's shape; undefined when a value does not read as its type (compiling the request whole gives the
 * error, with its path).
 */
export function requestShape(input: WidgetQueryInput): RequestShape | undefined {
  const literals: ((Literal | null)[] | null)[] = [];
  const filters: unknown[] = [];
  for (const entry of input.filters) {
    const { filter } = entry;
    const type = filter.value_type ?? 'string';
    if (
      !SLOTTED_OPS.has(filter.op) ||
      !Array.isArray(filter.values) ||
      !(FILTER_VALUE_TYPES as readonly string[]).includes(type)
    ) {
      literals.push(null);
      filters.push(entry);
      continue;
    }
    let read: (Literal | null)[];
    try {
      read = filter.values.map((v, i) => filterValueLiteral(v, type as FilterValueType, i));
    } catch {
      return undefined;
    }
    literals.push(read);
    filters.push({ path: entry.path, filter: { ...filter, values: read.map(valueShape) } });
  }
  return { key: JSON.stringify({ ...input, filters }), literals };
}

/** What of a value its SQL depends on (compileLiteral): null and booleans are keywords, the rest a typed parameter. */
function valueShape(lit: Literal | null): string | boolean | null {
  if (lit === null) return null;
  if (lit.type === 'boolean') return lit.value;
  if (lit.type === 'integer') return Math.abs(lit.value) > INT32_MAX ? 'bigint' : 'integer';
  return lit.type;
}

/**
 * Compiles the request whole, and makes it a template of its shape when the compile proves every slotted value is
 * one parameter of its own (null otherwise).
 */
export function compileTemplate(
  model: DatasetModel,
  input: WidgetQueryInput,
  shape: RequestShape,
  dialectOf: (dataSourceId: number) => Dialect,
): { query: CompiledQuery; template: PlanTemplate | null } {
  const track: ParamTrack = { filters: [], sources: [] };
  const query = compileWidgetQuery(model, input, dialectOf, { track });
  return { query, template: templateOf(query, input, shape, track) };
}

function templateOf(
  query: CompiledQuery,
  input: WidgetQueryInput,
  shape: RequestShape,
  track: ParamTrack,
): PlanTemplate | null {
  if (query.dialect === 'clickhouse') return null; // values are written into the text there
  const objects = input.filters.map((f) => f.filter);
  if (new Set(objects).size !== objects.length) return null;
  const position = new Map<Literal, number>();
  for (let i = 0; i < track.sources.length; i++) {
    const lit = track.sources[i];
    if (!lit) continue;
    if (position.has(lit)) return null;
    position.set(lit, i);
  }
  const slots: Slot[] = [];
  for (let f = 0; f < objects.length; f++) {
    const wanted = shape.literals[f];
    if (!wanted) continue;
    const compiled = track.filters.filter((c) => c.filter === objects[f]);
    if (compiled.length !== 1 || compiled[0].literals.length !== wanted.length) return null;
    const literals = compiled[0].literals;
    for (let v = 0; v < literals.length; v++) {
      const lit = literals[v];
      if (lit === null || lit.type === 'boolean') continue;
      const param = position.get(lit);
      if (param === undefined || query.params[param] !== wanted[v]?.value) return null;
      slots.push({ param, filter: f, value: v });
    }
  }
  return { query, slots };
}

/** The template's query with the values of a request of its shape. */
export function fillTemplate(template: PlanTemplate, shape: RequestShape): CompiledQuery {
  const params = template.query.params.slice();
  for (const { param, filter, value } of template.slots) params[param] = shape.literals[filter]![value]!.value;
  return { ...template.query, params };
}
