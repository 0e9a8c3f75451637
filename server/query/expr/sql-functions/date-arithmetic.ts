import type { ShiftUnit } from '../functions';
import { pick, type Arg, type SqlFunction } from './call-args';
import { SQL_UNIT } from './date';

const PG_INTERVAL: Record<ShiftUnit, string> = {
  year: `INTERVAL '1 year'`,
  quarter: `INTERVAL '3 months'`,
  month: `INTERVAL '1 month'`,
  week: `INTERVAL '7 days'`,
  day: `INTERVAL '1 day'`,
  hour: `INTERVAL '1 hour'`,
  minute: `INTERVAL '1 minute'`,
};

const DUCKDB_INTERVAL: Record<ShiftUnit, string> = {
  year: 'INTERVAL 1 YEAR',
  quarter: 'INTERVAL 3 MONTH',
  month: 'INTERVAL 1 MONTH',
  week: 'INTERVAL 7 DAY',
  day: 'INTERVAL 1 DAY',
  hour: 'INTERVAL 1 HOUR',
  minute: 'INTERVAL 1 MINUTE',
};

const MYSQL_UNIT: Record<ShiftUnit, string> = {
  year: 'YEAR',
  quarter: 'QUARTER',
  month: 'MONTH',
  week: 'WEEK',
  day: 'DAY',
  hour: 'HOUR',
  minute: 'MINUTE',
};

const CLICKHOUSE_ADD: Record<ShiftUnit, string> = {
  year: 'addYears',
  quarter: 'addMonths', // 18.16 has no addQuarters; the count is tripled below
  month: 'addMonths',
  week: 'addWeeks',
  day: 'addDays',
  hour: 'addHours',
  minute: 'addMinutes',
};

/** DATEADD(unit, n, d): month arithmetic clamps to the month's end in every dialect (Jan 31 + 1 month = Feb 29). */
const DATEADD: SqlFunction = ({ dialect, unit, args: [n, d] }) => {
  const u = unit as ShiftUnit;
  return pick(dialect, {
    postgresql: () => `(${d()} + ${n()} * ${PG_INTERVAL[u]})`,
    mysql: () => `DATE_ADD(${d()}, INTERVAL ${n()} ${MYSQL_UNIT[u]})`,
    clickhouse: () => `${CLICKHOUSE_ADD[u]}(${d()}, ${u === 'quarter' ? `(${n()}) * 3` : n()})`,
    duckdb: () => `(${d()} + ${n()} * ${DUCKDB_INTERVAL[u]})`,
  });
};

const pgTs = (x: Arg) => `CAST(${x()} AS timestamp)`;
const pgYears = (a: Arg, b: Arg) => `(EXTRACT(YEAR FROM ${b()}) - EXTRACT(YEAR FROM ${a()}))`;

const PG_DIFF: Record<ShiftUnit, (a: Arg, b: Arg) => string> = {
  year: (a, b) => `CAST(${pgYears(a, b)} AS integer)`,
  quarter: (a, b) =>
    `CAST(${pgYears(a, b)} * 4 + EXTRACT(QUARTER FROM ${b()}) - EXTRACT(QUARTER FROM ${a()}) AS integer)`,
  month: (a, b) => `CAST(${pgYears(a, b)} * 12 + EXTRACT(MONTH FROM ${b()}) - EXTRACT(MONTH FROM ${a()}) AS integer)`,
  week: (a, b) => `((CAST(DATE_TRUNC('week', ${pgTs(b)}) AS date) - CAST(DATE_TRUNC('week', ${pgTs(a)}) AS date)) / 7)`,
  day: (a, b) => `(CAST(${b()} AS date) - CAST(${a()} AS date))`,
  hour: (a, b) =>
    `CAST(EXTRACT(EPOCH FROM (DATE_TRUNC('hour', ${pgTs(b)}) - DATE_TRUNC('hour', ${pgTs(a)}))) / 3600 AS bigint)`,
  minute: (a, b) =>
    `CAST(EXTRACT(EPOCH FROM (DATE_TRUNC('minute', ${pgTs(b)}) - DATE_TRUNC('minute', ${pgTs(a)}))) / 60 AS bigint)`,
};

const mysqlYears = (a: Arg, b: Arg) => `(YEAR(${b()}) - YEAR(${a()}))`;
const mysqlMonday = (x: Arg) => `DATE_SUB(CAST(${x()} AS DATE), INTERVAL WEEKDAY(${x()}) DAY)`;
/** Whole units since a fixed start on a unit boundary: their difference counts the boundaries between a and b. */
const mysqlSince = (unit: string, x: Arg) => `TIMESTAMPDIFF(${unit}, '1000-01-01 00:00:00', ${x()})`;

const MYSQL_DIFF: Record<ShiftUnit, (a: Arg, b: Arg) => string> = {
  year: (a, b) => mysqlYears(a, b),
  quarter: (a, b) => `(${mysqlYears(a, b)} * 4 + QUARTER(${b()}) - QUARTER(${a()}))`,
  month: (a, b) => `(${mysqlYears(a, b)} * 12 + MONTH(${b()}) - MONTH(${a()}))`,
  week: (a, b) => `(DATEDIFF(${mysqlMonday(b)}, ${mysqlMonday(a)}) DIV 7)`,
  day: (a, b) => `DATEDIFF(${b()}, ${a()})`,
  hour: (a, b) => `(${mysqlSince('HOUR', b)} - ${mysqlSince('HOUR', a)})`,
  minute: (a, b) => `(${mysqlSince('MINUTE', b)} - ${mysqlSince('MINUTE', a)})`,
};

const CLICKHOUSE_RELATIVE: Record<ShiftUnit, string> = {
  year: 'toRelativeYearNum',
  quarter: 'toRelativeQuarterNum',
  month: 'toRelativeMonthNum',
  week: 'toRelativeWeekNum',
  day: 'toRelativeDayNum',
  hour: 'toRelativeHourNum',
  minute: 'toRelativeMinuteNum',
};

/**
 * DATEDIFF(unit, a, b): how many unit boundaries lie between a and b (b later gives a positive number), so
 * DATEDIFF('month', #2024-01-31#, #2024-02-01#) = 1 everywhere. Weeks start on Monday.
 */
const DATEDIFF: SqlFunction = ({ dialect, unit, args: [a, b] }) => {
  const u = unit as ShiftUnit;
  return pick(dialect, {
    postgresql: () => PG_DIFF[u](a, b),
    mysql: () => MYSQL_DIFF[u](a, b),
    clickhouse: () => `(toInt64(${CLICKHOUSE_RELATIVE[u]}(${b()})) - toInt64(${CLICKHOUSE_RELATIVE[u]}(${a()})))`,
    duckdb: () =>
      u === 'week'
        ? `(date_diff('day', date_trunc('week', ${a()}), date_trunc('week', ${b()})) // 7)`
        : `date_diff('${SQL_UNIT[u]}', ${a()}, ${b()})`,
  });
};

export const DATE_ARITHMETIC_FUNCTIONS: Record<string, SqlFunction> = { DATEADD, DATEDIFF };
