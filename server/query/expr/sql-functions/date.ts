import type { TruncUnit } from '../functions';
import { pick, type Arg, type SqlFunction } from './call-args';

type Part = 'YEAR' | 'QUARTER' | 'MONTH' | 'WEEK' | 'DAY' | 'HOUR' | 'MINUTE';

const MYSQL_PART: Record<Part, (x: Arg) => string> = {
  YEAR: (x) => `YEAR(${x()})`,
  QUARTER: (x) => `QUARTER(${x()})`,
  MONTH: (x) => `MONTH(${x()})`,
  WEEK: (x) => `WEEK(${x()}, 3)`, // mode 3 is the ISO week, as in the other dialects
  DAY: (x) => `DAYOFMONTH(${x()})`,
  HOUR: (x) => `HOUR(${x()})`,
  MINUTE: (x) => `MINUTE(${x()})`,
};

const CLICKHOUSE_PART: Record<Part, string> = {
  YEAR: 'toYear',
  QUARTER: 'toQuarter',
  MONTH: 'toMonth',
  WEEK: 'toISOWeek',
  DAY: 'toDayOfMonth',
  HOUR: 'toHour',
  MINUTE: 'toMinute',
};

/** A date part as an integer; weeks are ISO weeks (Monday first) everywhere. */
const part =
  (p: Part): SqlFunction =>
  ({ dialect, args: [x] }) =>
    pick(dialect, {
      postgresql: () => `CAST(EXTRACT(${p} FROM ${x()}) AS integer)`,
      mysql: () => MYSQL_PART[p](x),
      clickhouse: () => `${CLICKHOUSE_PART[p]}(${x()})`,
      duckdb: () => `${p.toLowerCase()}(${x()})`,
    });

const MYSQL_TRUNC: Record<TruncUnit, (x: Arg) => string> = {
  year: (x) => `MAKEDATE(YEAR(${x()}), 1)`,
  quarter: (x) => `DATE_ADD(MAKEDATE(YEAR(${x()}), 1), INTERVAL (QUARTER(${x()}) - 1) QUARTER)`,
  month: (x) => `DATE_SUB(CAST(${x()} AS DATE), INTERVAL (DAYOFMONTH(${x()}) - 1) DAY)`,
  week: (x) => `DATE_SUB(CAST(${x()} AS DATE), INTERVAL WEEKDAY(${x()}) DAY)`,
  day: (x) => `CAST(${x()} AS DATE)`,
  hour: (x) => `DATE_ADD(CAST(${x()} AS DATE), INTERVAL HOUR(${x()}) HOUR)`,
};

const CLICKHOUSE_TRUNC: Record<TruncUnit, string> = {
  year: 'toStartOfYear',
  quarter: 'toStartOfQuarter',
  month: 'toStartOfMonth',
  week: 'toMonday',
  day: 'toDate',
  hour: 'toStartOfHour',
};

/** The unit text in SQL comes from these tables, never from the user's literal (which only selects the row). */
export const SQL_UNIT: Record<string, string> = {
  year: 'year',
  quarter: 'quarter',
  month: 'month',
  week: 'week',
  day: 'day',
  hour: 'hour',
  minute: 'minute',
};

/**
 * Start of the period. PostgreSQL gets a timestamp argument so that a date is not widened to timestamptz (which
 * would bring the session time zone in); MySQL has no date_trunc and builds the start from parts without going
 * through strings.
 */
const DATETRUNC: SqlFunction = ({ dialect, unit, args: [x] }) => {
  const u = unit as TruncUnit;
  return pick(dialect, {
    postgresql: () => `DATE_TRUNC('${SQL_UNIT[u]}', CAST(${x()} AS timestamp))`,
    mysql: () => MYSQL_TRUNC[u](x),
    clickhouse: () => `${CLICKHOUSE_TRUNC[u]}(${x()})`,
    duckdb: () => `date_trunc('${SQL_UNIT[u]}', ${x()})`,
  });
};

export const DATE_FUNCTIONS: Record<string, SqlFunction> = {
  YEAR: part('YEAR'),
  QUARTER: part('QUARTER'),
  MONTH: part('MONTH'),
  WEEK: part('WEEK'),
  DAY: part('DAY'),
  HOUR: part('HOUR'),
  MINUTE: part('MINUTE'),
  DATETRUNC,
  TODAY: ({ dialect }) => (dialect === 'clickhouse' ? 'today()' : 'CURRENT_DATE'),
  // Wall-clock time without a zone, like the datetime literals and the columns it is compared with.
  NOW: ({ dialect }) =>
    pick(dialect, {
      postgresql: () => 'LOCALTIMESTAMP',
      mysql: () => 'NOW()',
      clickhouse: () => 'now()',
      duckdb: () => 'CAST(current_timestamp AS TIMESTAMP)',
    }),
};
