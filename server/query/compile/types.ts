import type { Dialect } from '../expr';

/*
 * The query engine's input, in the wire's own words (snake_case where the wire has it): a widget configuration as
 * the request states it. Every text in it is either an expression of the language (server/query/expr) or an id the
 * engine maps to a generated alias; none of it is ever written into SQL as it is.
 */

export interface ShelfField {
  /** Own id: sorts refer to it, data rows use it as key. */
  id: string;
  alias?: string;
  /** Dataset field name and table (object name): used when `sql` is empty. */
  field?: string;
  table?: string;
  /** An expression: [table.field], [calculated name], aggregates over them. */
  sql?: string;
  settings?: Record<string, unknown>;
}

export interface FilterSpec {
  sql: string;
  op: string;
  values?: unknown[] | null;
  value_type?: string | null;
}

export interface SortSpec {
  field_id: string;
  direction: 'asc' | 'desc';
}

/** A calculated dataset field's definition as the request carries it (specification, rule 2). */
export interface CalculatedFieldDef {
  id?: string | number;
  name: string;
  alias?: string;
  primitive_type?: string;
  sql: string;
}

export type ParameterValues = Record<string, string | number | boolean | null>;

export interface WidgetShelves {
  rows: ShelfField[];
  series: ShelfField[];
  columns: ShelfField[];
}

/**
 * One widget data request after the saved configuration and the request's overrides were merged.
 * `filters` carry the path the caller knows them by, so that an error can name the right element.
 */
export interface WidgetQueryInput extends WidgetShelves {
  type: string;
  filters: { path: string; filter: FilterSpec }[];
  sorts: SortSpec[];
  /** The request's definitions first, then the saved widget's; the first of a name wins. */
  calculatedFields: { path: string; def: CalculatedFieldDef }[];
  parameters: ParameterValues;
  /** Pages from 1. Ignored for the KPI kind, which answers one row. */
  page: number;
  pageSize: number;
}

/** One output column of a compiled query: the caller's key (a shelf field id) and the SQL alias standing for it. */
export interface OutputColumn {
  key: string;
  alias: string;
}

/** The one query a request compiles to, and what is needed to read its result. */
export interface CompiledQuery {
  dialect: Dialect;
  sql: string;
  params: unknown[];
  columns: OutputColumn[];
  /** The data source all objects of the query belong to. */
  dataSourceId: number;
  /** Rows asked of the database (page size + 1 for `hasMore`); undefined for an unbounded query. */
  fetchLimit?: number;
  /** A grouped query compiled with `shape`: all of it but its aggregates (assemble.ts shapeOf). */
  shape?: string;
  /**
   * No SQL a user wrote is in `sql` (the dataset has no SQL objects): it is the compiler's own text, identifiers
   * quoted and every value a parameter, so a connector may send it in ways it would not send a user's text
   * (QueryOptions.compiledText).
   */
  compiledText?: boolean;
}

export const KPI_KIND = 'kpi';
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 10_000;
