import type { Dialect } from '../dialect';
import { pick, plain, type Arg, type SqlFunction } from './call-args';

/**
 * Division is always true division and a zero divisor gives NULL in every dialect (PostgreSQL would fail the
 * query, ClickHouse would return inf): the `/` operator and DIV() share this.
 */
export function divide(dialect: Dialect, a: Arg, b: Arg): string {
  return pick(dialect, {
    postgresql: () => `(CAST(${a()} AS double precision) / NULLIF(${b()}, 0))`,
    mysql: () => `(CAST(${a()} AS DOUBLE) / NULLIF(${b()}, 0))`, // plain / would keep only 4 decimals
    // toFloat64: ClickHouse divides a Decimal within its own scale (6.577 / 1 would give 6.57).
    clickhouse: () => `(toFloat64(${a()}) / nullIf(${b()}, 0))`,
    duckdb: () => `(CAST(${a()} AS DOUBLE) / NULLIF(${b()}, 0))`,
  });
}

export function modulo(dialect: Dialect, a: Arg, b: Arg): string {
  // ClickHouse computes `%` under a NULL too (on the default 0) and fails, so the divisor is never 0 there.
  if (dialect === 'clickhouse') return `if(${b()} = 0, NULL, ${a()} % if(${b()} = 0, 1, ${b()}))`;
  return `(${a()} % NULLIF(${b()}, 0))`;
}

/** Out of the domain (square root of a negative, logarithm of zero) is NULL everywhere instead of an error or NaN. */
const guarded =
  (name: string, clickhouse: string, domain: '>= 0' | '> 0'): SqlFunction =>
  ({ dialect, args: [x] }) =>
    `${dialect === 'clickhouse' ? clickhouse : name}(CASE WHEN ${x()} ${domain} THEN ${x()} ELSE NULL END)`;

/**
 * ClickHouse aggregates a non-Nullable column over no rows to 0 (nan for avg) where SQL says NULL; over a Nullable
 * argument it answers NULL like the other dialects (18.16 has no maxOrNull).
 */
const nullOnEmpty =
  (sqlName: string, clickhouse: string): SqlFunction =>
  ({ dialect, args: [x] }) =>
    dialect === 'clickhouse' ? `${clickhouse}(toNullable(${x()}))` : `${sqlName}(${x()})`;

export const AGGREGATE_FUNCTIONS: Record<string, SqlFunction> = {
  SUM: nullOnEmpty('SUM', 'sum'),
  // MySQL would average integers into a DECIMAL with four digits after the point.
  AVG: ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `AVG(${x()})`,
      mysql: () => `AVG(CAST(${x()} AS DOUBLE))`,
      clickhouse: () => `avg(toNullable(${x()}))`,
      duckdb: () => `AVG(${x()})`,
    }),
  MIN: nullOnEmpty('MIN', 'min'),
  MAX: nullOnEmpty('MAX', 'max'),
  COUNT: ({ dialect, args: [x] }) => {
    if (dialect === 'clickhouse') return x ? `count(${x()})` : 'count()';
    return x ? `COUNT(${x()})` : 'COUNT(*)';
  },
  COUNTD: ({ dialect, args: [x] }) => (dialect === 'clickhouse' ? `uniqExact(${x()})` : `COUNT(DISTINCT ${x()})`),
};

export const MATH_FUNCTIONS: Record<string, SqlFunction> = {
  ABS: plain('ABS', 'abs'),
  ROUND: ({ dialect, args, raw }) => {
    const [x, n] = args;
    if (dialect === 'postgresql') {
      // round(double precision, integer) does not exist in PostgreSQL; numeric also rounds half away from zero.
      if (!n) return `ROUND(CAST(${x()} AS numeric))`;
      const digits = raw[1].kind === 'literal' ? n() : `CAST(${n()} AS integer)`;
      return `ROUND(CAST(${x()} AS numeric), ${digits})`;
    }
    const name = dialect === 'clickhouse' ? 'round' : 'ROUND';
    return n ? `${name}(${x()}, ${n()})` : `${name}(${x()})`;
  },
  FLOOR: plain('FLOOR', 'floor'),
  CEILING: plain('CEILING', 'ceil'),
  SQRT: guarded('SQRT', 'sqrt', '>= 0'),
  POWER: plain('POWER', 'pow'),
  LN: guarded('LN', 'log', '> 0'),
  LOG10: ({ dialect, ...rest }) =>
    guarded(dialect === 'postgresql' ? 'LOG' : 'LOG10', 'log10', '> 0')({ dialect, ...rest }),
  EXP: plain('EXP', 'exp'),
  SIGN: ({ dialect, args: [x] }) =>
    // ClickHouse 18.16 has no sign().
    dialect === 'clickhouse' ? `multiIf(${x()} > 0, 1, ${x()} < 0, -1, ${x()} = 0, 0, NULL)` : `SIGN(${x()})`,
  DIV: ({ dialect, args: [a, b] }) => divide(dialect, a, b),
};
