import type { Literal } from './ast';
import type { Dialect, ParamSink } from './dialect';
import { ExpressionError } from './errors';

const INT32_MAX = 2 ** 31 - 1;

/**
 * A literal as SQL. Values go through the sink (bound, or escaped for ClickHouse); what is written around the
 * placeholder is fixed text chosen by type. PostgreSQL and DuckDB get an explicit cast because an untyped parameter
 * is ambiguous there (`$1 + $2`, `CONCAT($1)`, `SUM(CASE ... THEN $1 END)` fail or become text). A string compared
 * with a column is left uncast (`bare`) so the server gives it the column's type: `uuid_col = $1` works, while
 * `uuid_col = $1::text` would not. TRUE, FALSE and NULL are keywords, not values, and are written as such.
 */
export function compileLiteral(lit: Literal, dialect: Dialect, params: ParamSink, bare = false): string {
  if (lit.type === 'null') return 'NULL';
  if (lit.type === 'boolean') {
    if (dialect === 'clickhouse') return lit.value ? '1' : '0';
    return lit.value ? 'TRUE' : 'FALSE';
  }
  const p = params.add(lit.value, lit);
  switch (lit.type) {
    case 'integer': {
      const wide = Math.abs(lit.value) > INT32_MAX;
      if (dialect === 'postgresql') return `CAST(${p} AS ${wide ? 'bigint' : 'integer'})`;
      if (dialect === 'duckdb') return `CAST(${p} AS ${wide ? 'BIGINT' : 'INTEGER'})`;
      return p;
    }
    case 'float':
      if (dialect === 'postgresql') return `CAST(${p} AS numeric)`;
      if (dialect === 'duckdb') return `CAST(${p} AS DOUBLE)`;
      if (dialect === 'clickhouse') return `toFloat64(${p})`;
      return p;
    case 'string':
      if (bare) return p;
      if (dialect === 'postgresql') return `CAST(${p} AS text)`;
      if (dialect === 'duckdb') return `CAST(${p} AS VARCHAR)`;
      return p;
    case 'date':
      return dialect === 'clickhouse' ? `toDate(${p})` : `CAST(${p} AS ${dialect === 'postgresql' ? 'date' : 'DATE'})`;
    case 'datetime':
      if (dialect === 'clickhouse') return `toDateTime(${p})`;
      if (dialect === 'mysql') return `CAST(${p} AS DATETIME)`;
      return `CAST(${p} AS ${dialect === 'postgresql' ? 'timestamp' : 'TIMESTAMP'})`;
    default:
      throw new ExpressionError(`неизвестный тип литерала ${String((lit as { type: unknown }).type)}`);
  }
}
