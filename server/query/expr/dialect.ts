import type { Literal } from './ast';
import { ExpressionError } from './errors';

export type Dialect = 'postgresql' | 'mysql' | 'clickhouse' | 'duckdb';

export const DIALECTS: readonly Dialect[] = ['postgresql', 'mysql', 'clickhouse', 'duckdb'];

/**
 * Collects the values of a query. `add` returns the text that stands for the value in SQL; `from` is the literal the
 * value is, when it is one (a request's filter values are: server/query/compile/plan-templates.ts).
 */
export interface ParamSink {
  add(value: unknown, from?: Literal): string;
}

export type LiteralValue = string | number | boolean | null | Date;

/**
 * Quotes a name as an identifier: "x" with "" doubling (PostgreSQL, DuckDB), `x` with `` doubling (MySQL). ClickHouse
 * reads backslash escapes inside backquotes, so there both the backslash and the backquote are escaped with one.
 */
export function quoteIdentifier(dialect: Dialect, name: string): string {
  if (typeof name !== 'string' || name === '') throw new ExpressionError('пустое имя поля или таблицы');
  if (name.includes('\0')) throw new ExpressionError('имя поля или таблицы содержит нулевой символ');
  switch (dialect) {
    case 'postgresql':
    case 'duckdb':
      return `"${name.replaceAll('"', '""')}"`;
    case 'mysql':
      return `\`${name.replaceAll('`', '``')}\``;
    case 'clickhouse':
      return `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
  }
}

const CH_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\\0',
};

function quoteString(dialect: Dialect, s: string): string {
  switch (dialect) {
    case 'clickhouse':
      return `'${s.replace(/[\\'\n\r\t\0]/g, (c) => CH_ESCAPES[c])}'`;
    case 'postgresql':
      // E'' reads backslashes the same whatever standard_conforming_strings says.
      if (s.includes('\0')) throw new ExpressionError('строка содержит нулевой символ');
      return `E'${s.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
    case 'mysql':
      // Doubling both stays safe under NO_BACKSLASH_ESCAPES too (there it only doubles the backslash in the data).
      return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
    case 'duckdb':
      return `'${s.replaceAll("'", "''")}'`;
  }
}

/** Numbers are written from the double itself, so no user text survives; a negative one is parenthesized so that
 * it can never form `--` with a minus in front of it. */
function renderNumber(n: number): string {
  if (!Number.isFinite(n)) throw new ExpressionError(`число ${n} не может быть значением запроса`);
  if (n === 0) return '0';
  return n < 0 ? `(${String(n)})` : String(n);
}

function renderDateTime(dialect: Dialect, d: Date): string {
  if (Number.isNaN(d.getTime())) throw new ExpressionError('неверная дата');
  const text = d.toISOString().slice(0, 19).replace('T', ' ');
  switch (dialect) {
    case 'clickhouse':
      return `toDateTime('${text}', 'UTC')`;
    case 'mysql':
      return `CAST('${text}' AS DATETIME)`;
    case 'postgresql':
    case 'duckdb':
      return `CAST('${text}' AS TIMESTAMP)`;
  }
}

/**
 * A value as an SQL literal. Meant for ClickHouse, which (in the 18.16 we support) has no bound parameters; the
 * other dialects bind values instead. A Date is written as its UTC wall-clock time.
 */
export function escapeLiteral(dialect: Dialect, value: LiteralValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return dialect === 'clickhouse' ? (value ? '1' : '0') : value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return renderNumber(value);
  if (typeof value === 'string') return quoteString(dialect, value);
  if (value instanceof Date) return renderDateTime(dialect, value);
  throw new ExpressionError(`значение типа ${typeof value} не может быть значением запроса`);
}

function checkValue(value: unknown): LiteralValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || value instanceof Date) return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ExpressionError(`число ${value} не может быть значением запроса`);
    return value;
  }
  throw new ExpressionError(`значение типа ${typeof value} не может быть значением запроса`);
}

/**
 * Placeholders: $1, $2 ... (PostgreSQL, DuckDB), ? (MySQL). For ClickHouse the value is escaped into the text and
 * `values` stays empty. One sink serves one whole query, so numbering runs across all its expressions.
 */
export function createParamSink(dialect: Dialect): ParamSink & { values: unknown[]; sources: (Literal | undefined)[] } {
  const values: unknown[] = [];
  const sources: (Literal | undefined)[] = [];
  return {
    values,
    /** Which literal each value is (by position in `values`), where the compiler said. */
    sources,
    add(value: unknown, from?: Literal): string {
      const checked = checkValue(value);
      if (dialect === 'clickhouse') return escapeLiteral(dialect, checked);
      values.push(checked);
      sources.push(from);
      return dialect === 'mysql' ? '?' : `$${values.length}`;
    },
  };
}
