import { pick, type SqlFunction } from './call-args';

const all = (args: (() => string)[]) => args.map((a) => a()).join(', ');

/**
 * Conversions. INT truncates toward zero in every dialect (a plain cast would round in PostgreSQL, MySQL and
 * DuckDB but truncate in ClickHouse); going through numeric/TRUNCATE also accepts numeric strings such as '42.7'.
 */
export const CAST_FUNCTIONS: Record<string, SqlFunction> = {
  FLOAT: ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `CAST(${x()} AS double precision)`,
      mysql: () => `CAST(${x()} AS DOUBLE)`,
      clickhouse: () => `toFloat64(${x()})`,
      duckdb: () => `CAST(${x()} AS DOUBLE)`,
    }),
  INT: ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `CAST(TRUNC(CAST(${x()} AS numeric)) AS bigint)`,
      mysql: () => `CAST(TRUNCATE(${x()}, 0) AS SIGNED)`,
      clickhouse: () => `toInt64(toFloat64(${x()}))`, // toInt64 alone cannot read '42.7'
      duckdb: () => `CAST(trunc(CAST(${x()} AS DOUBLE)) AS BIGINT)`,
    }),
  STR: ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `CAST(${x()} AS text)`,
      mysql: () => `CAST(${x()} AS CHAR)`,
      clickhouse: () => `toString(${x()})`,
      duckdb: () => `CAST(${x()} AS VARCHAR)`,
    }),
  DATE: ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `CAST(${x()} AS date)`,
      mysql: () => `CAST(${x()} AS DATE)`,
      clickhouse: () => `toDate(${x()})`,
      duckdb: () => `CAST(${x()} AS DATE)`,
    }),
};

export const LOGIC_FUNCTIONS: Record<string, SqlFunction> = {
  IF: ({ args: [cond, a, b] }) => `CASE WHEN ${cond()} THEN ${a()} ELSE ${b()} END`,
  IFNULL: ({ dialect, args }) => (dialect === 'clickhouse' ? `ifNull(${all(args)})` : `COALESCE(${all(args)})`),
  COALESCE: ({ dialect, args }) => `${dialect === 'clickhouse' ? 'coalesce' : 'COALESCE'}(${all(args)})`,
  ZN: ({ dialect, args: [x] }) => (dialect === 'clickhouse' ? `ifNull(${x()}, 0)` : `COALESCE(${x()}, 0)`),
};
