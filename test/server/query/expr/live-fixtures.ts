import type { WidgetFilter } from '../../../../server/query/expr';

/**
 * Cases run against real servers. Table t has three rows; row 1:
 *   n=7 m=2 z=0 x=2.5 x2=2.567 neg=-2.5 s='Привет, мир' sp='  ab  ' p='50%_x' sn=NULL d=2024-01-31
 *   ts=2024-03-10 10:45:30 (a Sunday) ts2=2024-03-11 09:05:00 ok=true nul=NULL
 * rows 2 and 3: n=2, everything else NULL.
 * Expected values: number (compared with tolerance), string (dates as text; a date may come back as midnight),
 * boolean (1/0 and 't'/'f' accepted), null.
 */
export const ROW_CASES: [string, number | string | boolean | null][] = [
  ['[t.n] / [t.m]', 3.5],
  ['[t.n] / [t.z]', null],
  ['[t.n] % [t.m]', 1],
  ['[t.n] % [t.z]', null],
  ['DIV([t.n], 4)', 1.75],
  ['-[t.n] * 2 + 1', -13],
  ['[t.n] - -5', 12],
  ['1 + 2 * 3 - (4 - 1)', 4],
  ['ROUND([t.x2])', 3],
  ['ROUND([t.x2], 2)', 2.57],
  ['FLOOR([t.neg])', -3],
  ['CEILING([t.neg])', -2],
  ['ABS([t.neg])', 2.5],
  ['SQRT(16)', 4],
  ['SQRT(-1)', null],
  ['LN(0)', null],
  ['LOG10(1000)', 3],
  ['EXP(0)', 1],
  ['POWER(2, 10)', 1024],
  ['SIGN([t.neg])', -1],
  ['INT([t.neg])', -2],
  ["INT('42.7')", 42],
  ["FLOAT('1.5')", 1.5],
  ['STR([t.n])', '7'],
  ["DATE('2024-02-29')", '2024-02-29'],
  ["CONCAT([t.s], '!', [t.sn], [t.n])", 'Привет, мир!7'],
  ['UPPER([t.s])', 'ПРИВЕТ, МИР'],
  ['LOWER([t.s])', 'привет, мир'],
  ['TRIM([t.sp])', 'ab'],
  ['LTRIM([t.sp])', 'ab  '],
  ['RTRIM([t.sp])', '  ab'],
  ['LEN([t.s])', 11],
  ['LEFT([t.s], 6)', 'Привет'],
  ['RIGHT([t.s], 3)', 'мир'],
  ['RIGHT([t.s], 50)', 'Привет, мир'],
  ['SUBSTR([t.s], 9)', 'мир'],
  ['SUBSTR([t.s], 1, 6)', 'Привет'],
  ["REPLACE([t.s], 'мир', 'world')", 'Привет, world'],
  ["CONTAINS([t.p], '%_')", true],
  ["CONTAINS([t.p], 'y')", false],
  ["STARTSWITH([t.p], '50%')", true],
  ["STARTSWITH([t.p], '0')", false],
  ["ENDSWITH([t.p], '_x')", true],
  ["ENDSWITH([t.p], 'too long_x')", false],
  ["[t.p] LIKE '50\\%%'", true],
  ["[t.p] LIKE '50\\_%'", false],
  ["[t.s] NOT LIKE 'П%'", false],
  ['YEAR([t.ts])', 2024],
  ['QUARTER([t.ts])', 1],
  ['MONTH([t.ts])', 3],
  ['WEEK([t.ts])', 10],
  ['DAY([t.ts])', 10],
  ['HOUR([t.ts])', 10],
  ['MINUTE([t.ts])', 45],
  ["DATETRUNC('year', [t.d])", '2024-01-01'],
  ["DATETRUNC('quarter', [t.ts])", '2024-01-01'],
  ["DATETRUNC('month', [t.d])", '2024-01-01'],
  ["DATETRUNC('week', [t.ts])", '2024-03-04'],
  ["DATETRUNC('day', [t.ts])", '2024-03-10'],
  ["DATETRUNC('hour', [t.ts])", '2024-03-10 10:00:00'],
  ["DATEADD('month', 1, [t.d])", '2024-02-29'],
  ["DATEADD('quarter', 1, [t.d])", '2024-04-30'],
  ["DATEADD('year', 1, [t.d])", '2025-01-31'],
  ["DATEADD('week', 1, [t.d])", '2024-02-07'],
  ["DATEADD('day', -1, [t.d])", '2024-01-30'],
  ["DATEADD('hour', 2, [t.ts])", '2024-03-10 12:45:30'],
  ["DATEADD('minute', 15, [t.ts])", '2024-03-10 11:00:30'],
  ["DATEDIFF('day', [t.ts], [t.ts2])", 1],
  ["DATEDIFF('week', [t.ts], [t.ts2])", 1],
  ["DATEDIFF('month', [t.d], [t.ts])", 2],
  ["DATEDIFF('quarter', [t.d], [t.ts])", 0],
  ["DATEDIFF('year', [t.ts2], [t.d])", 0],
  ["DATEDIFF('hour', [t.ts], [t.ts2])", 23],
  ["DATEDIFF('minute', [t.ts], [t.ts2])", 1340],
  ["DATEDIFF('month', #2024-01-31#, #2024-02-01#)", 1],
  ["DATEDIFF('day', #2024-03-02 00:00:00#, #2024-03-01 23:59:59#)", -1],
  ["DATEDIFF('day', TODAY(), NOW())", 0],
  ['TODAY() <= NOW()', true],
  ['[t.d] = #2024-01-31#', true],
  ['[t.ts] > #2024-03-10 10:45:29#', true],
  ["IF([t.ok], 'y', 'n')", 'y'],
  ['IFNULL([t.nul], 5)', 5],
  ['COALESCE([t.nul], NULL, 3)', 3],
  ['ZN([t.nul])', 0],
  ["COALESCE([t.sn], 'dflt')", 'dflt'],
  ["CASE WHEN NOT [t.ok] THEN [t.s] ELSE 'no' END", 'no'],
  ['IFNULL([t.d], #2000-01-01#)', '2024-01-31'],
  ["CASE [t.n] WHEN 7 THEN 'seven' ELSE 'other' END", 'seven'],
  ['CASE WHEN [t.n] > 10 THEN 1 END', null],
  ['[t.n] IN (1, 7)', true],
  ['[t.n] NOT BETWEEN 1 AND 5', true],
  ['[t.nul] IS NULL AND NOT [t.ok] = FALSE', true],
  ["[t.s] = 'Привет, мир'", true],
  ["[t.s] IN ('a', 'Привет, мир')", true],
  ["'it''s' = 'it''s'", true],
  // Quotes and backslashes survive binding and ClickHouse escaping unchanged.
  ["CONCAT('x''\\y', '')", "x'\\y"],
  ["LEN('a''\\b')", 4],
];

export const AGGREGATE_CASES: [string, number | string][] = [
  ['SUM([t.n])', 11],
  ['AVG([t.n])', 11 / 3],
  ['COUNT([t.s])', 1],
  ['COUNT()', 3],
  ['COUNTD([t.n])', 2],
  ['MIN([t.n])', 2],
  ['MAX([t.d])', '2024-01-31'],
  ['SUM([t.n]) / COUNT()', 11 / 3],
  ['SUM(IF([t.n] > 5, 1, 0))', 1],
];

/** Filters as `SELECT COUNT(*) FROM t WHERE <filter>`. */
export const FILTER_CASES: [WidgetFilter, number][] = [
  [{ sql: '[t.s]', op: 'in', values: ['Привет, мир'], value_type: 'string' }, 1],
  [{ sql: '[t.s]', op: 'in', values: [], value_type: 'string' }, 0],
  [{ sql: '[t.s]', op: 'not_in', values: [], value_type: 'string' }, 3],
  [{ sql: '[t.s]', op: 'in', values: [null], value_type: 'string' }, 2],
  [{ sql: '[t.s]', op: 'not_in', values: ['Привет, мир', null], value_type: 'string' }, 0],
  [{ sql: '[t.p]', op: 'contains', values: ['%_'], value_type: 'string' }, 1],
  [{ sql: '[t.p]', op: 'contains', values: ['%x%'], value_type: 'string' }, 0],
  [{ sql: '[t.p]', op: 'starts_with', values: ['50%'], value_type: 'string' }, 1],
  [{ sql: '[t.p]', op: 'starts_with', values: ['_'], value_type: 'string' }, 0],
  [{ sql: '[t.s]', op: 'in', values: ["x'\\); --", 'Привет, мир'], value_type: 'string' }, 1],
  [{ sql: '[t.s]', op: 'contains', values: ["\\'%"], value_type: 'string' }, 0],
  [{ sql: '[t.n]', op: 'gt', values: ['5'], value_type: 'number' }, 1],
  [{ sql: '[t.n]', op: 'between', values: [2, 7], value_type: 'integer' }, 3],
  [{ sql: '[t.n] / 2', op: 'lte', values: [1.5], value_type: 'float' }, 2],
  [{ sql: '[t.d]', op: 'between', values: ['2024-01-01', '2024-01-31'], value_type: 'date' }, 1],
  [{ sql: '[t.ts]', op: 'gte', values: ['2024-03-10T10:45:30.000Z'], value_type: 'datetime' }, 1],
  [{ sql: '[t.ok]', op: 'eq', values: [true], value_type: 'boolean' }, 1],
  [{ sql: 'UPPER([t.s])', op: 'eq', values: ['ПРИВЕТ, МИР'] }, 1],
  [{ sql: '[t.nul]', op: 'is_null', value_type: 'integer' }, 3],
  [{ sql: "DATETRUNC('month', [t.d])", op: 'eq', values: ['2024-01-01'], value_type: 'date' }, 1],
];

/** Compares a value read from a server with the expected one, tolerating each driver's representation. */
export function sameValue(actual: unknown, expected: number | string | boolean | null): boolean {
  if (expected === null) return actual === null;
  if (actual === null || actual === undefined) return false;
  if (typeof expected === 'boolean') {
    const truthy = actual === true || actual === 1 || actual === '1' || actual === 't' || actual === 'true';
    const falsy = actual === false || actual === 0 || actual === '0' || actual === 'f' || actual === 'false';
    return expected ? truthy : falsy;
  }
  if (typeof expected === 'number') return Math.abs(Number(actual) - expected) < 1e-9;
  const text = String(actual).replace(/(\.0+)?$/, '');
  return text === expected || text === `${expected} 00:00:00`;
}
