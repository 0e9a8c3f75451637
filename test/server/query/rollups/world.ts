import type { DatasetField, DatasetModel } from '../../../../server/query/compile/dataset-model';
import type { FilterSpec, ShelfField, WidgetQueryInput } from '../../../../server/query/compile/types';
import { measureColumns } from '../../../../server/rollups/definitions';
import type { Granularity, RollupAggregation, RollupDefinition, ServedRollup } from '../../../../server/rollups/types';

/*
 * The fixed dataset of the rollup tests: orders(date, datetime, region, category, amount, qty) and a calculated field
 * [net] = amount * qty; rows generated from a seed; rollup definitions over it; and a seeded generator of random
 * widget requests (groupings with date granularities, measures with aggregations, filters, a row rule).
 */

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const REGIONS = ['Север', 'Юг', 'Запад', 'Восток'];
const CATEGORIES = ['A', 'B', 'C'];

export interface OrderRow {
  date: string | null;
  datetime: string;
  region: string | null;
  category: string;
  amount: number | null;
  qty: number;
}

/** `n` orders over 2023-2025 (some dates, regions and amounts NULL); amounts in cents, so sums are exact. */
export function orderRows(n: number, seed = 7): OrderRow[] {
  const r = rng(seed);
  const start = Date.UTC(2023, 0, 1);
  const out: OrderRow[] = [];
  for (let i = 0; i < n; i++) {
    const t = start + Math.floor(r() * 3 * 365 * 86_400) * 1000;
    const iso = new Date(t).toISOString();
    out.push({
      date: r() < 0.03 ? null : iso.slice(0, 10),
      datetime: `${iso.slice(0, 10)} ${iso.slice(11, 19)}`,
      region: r() < 0.05 ? null : REGIONS[Math.floor(r() * REGIONS.length)],
      category: CATEGORIES[Math.floor(r() * CATEGORIES.length)],
      amount: r() < 0.04 ? null : Math.round(r() * 100_000) / 100,
      qty: 1 + Math.floor(r() * 9),
    });
  }
  return out;
}

const field = (
  id: number,
  name: string,
  primitiveType: DatasetField['primitiveType'],
  extra: Partial<DatasetField> = {},
): DatasetField => ({
  id,
  objectId: 1,
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
  ...extra,
});

export const F = { date: 11, datetime: 12, region: 13, category: 14, amount: 15, qty: 16, net: 17 } as const;

/** The orders model on data source 1 (table `orders`). */
export function ordersModel(over: Partial<DatasetModel> = {}): DatasetModel {
  return {
    id: 5,
    name: 'Заказы',
    workspaceId: 1,
    live: true,
    dataSourceIds: [1],
    version: 3,
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    objects: [{ id: 1, dataSourceId: 1, name: 'orders', kind: 'table', schema: null, table: 'orders', sql: null }],
    fields: [
      field(F.date, 'date', 'date'),
      field(F.datetime, 'datetime', 'datetime'),
      field(F.region, 'region', 'string'),
      field(F.category, 'category', 'string'),
      field(F.amount, 'amount', 'float', { aggregation: 'sum' }),
      field(F.qty, 'qty', 'integer'),
      {
        ...field(F.net, 'net', 'float'),
        objectId: null,
        kind: 'calculated',
        column: null,
        formula: '[orders.amount] * [orders.qty]',
      },
    ],
    relations: [],
    hierarchies: [],
    filters: [],
    // Read by random widgets' categories and filters: its value is the request's, substituted before matching.
    parameters: [
      { id: 1, name: 'from_year', primitiveType: 'integer', defaultValue: '2024', domain: { kind: 'any' }, order: 0 },
    ],
    ...over,
  };
}

function rollupDefinition(
  id: number,
  dims: [number, Granularity | null][],
  measures: [number, RollupAggregation][],
): RollupDefinition {
  return {
    id,
    datasetId: 5,
    name: `rollup ${id}`,
    enabled: true,
    dimensions: dims.map(([fieldId, granularity], i) => ({ fieldId, granularity, column: `d${i}` })),
    measures: measures.map(([fieldId, aggregation], i) => ({
      fieldId,
      aggregation,
      columns: measureColumns(i, aggregation),
    })),
    refresh: { mode: 'with_extract' },
  };
}

/** The rollups of the tests: by day (wide), by month and region (small), by datetime's day and category. */
export const ROLLUPS: RollupDefinition[] = [
  rollupDefinition(
    1,
    [
      [F.date, 'day'],
      [F.region, null],
      [F.category, null],
    ],
    [
      [F.amount, 'AVG'],
      [F.qty, 'SUM'],
      [F.qty, 'MIN'],
      [F.qty, 'MAX'],
      [F.net, 'SUM'],
      [F.amount, 'MAX'],
    ],
  ),
  rollupDefinition(
    2,
    [
      [F.date, 'month'],
      [F.region, null],
    ],
    [
      [F.amount, 'SUM'],
      [F.qty, 'SUM'],
      [F.amount, 'COUNT'],
    ],
  ),
  rollupDefinition(
    3,
    [
      [F.datetime, 'day'],
      [F.category, null],
    ],
    [
      [F.amount, 'SUM'],
      [F.amount, 'COUNT'],
    ],
  ),
];

export const served = (definition: RollupDefinition, rows: number): ServedRollup => ({
  definition,
  load: { id: `load-${definition.id}`, datasetVersion: 3, extractLoadId: null, rows, bytes: 0, builtAt: new Date() },
});

export function request(over: Partial<WidgetQueryInput> = {}): WidgetQueryInput {
  return {
    type: 'table',
    rows: [],
    series: [],
    columns: [],
    filters: [],
    sorts: [],
    calculatedFields: [{ path: 'calculatedFields[0]', def: { name: 'net', sql: '[orders.amount] * [orders.qty]' } }],
    parameters: {},
    page: 1,
    pageSize: 1000,
    ...over,
  };
}

const UNITS: Granularity[] = ['day', 'week', 'month', 'quarter', 'year'];

export interface RandomWidget {
  input: WidgetQueryInput;
  /** A row rule on region for the viewer (as datasetSecurity adds it: a model filter with a negative id). */
  rowRule: string[] | null;
}

/** A random widget of the orders dataset: mostly ones some rollup can answer, some that none can. */
export function randomWidget(r: () => number): RandomWidget {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const categories = [
    () => '[orders.region]',
    () => '[orders.category]',
    () => `DATETRUNC('${pick(UNITS)}', [orders.date])`,
    () => `${pick(['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY'])}([orders.date])`,
    () => `DATETRUNC('${pick(UNITS)}', [orders.datetime])`,
    () => '[orders.date]',
    () => "IF([orders.region] = 'Юг', 'south', 'other')",
    () => 'IF(YEAR([orders.date]) >= [from_year], 1, 0)',
  ];
  const measures = [
    () => `SUM([orders.${pick(['amount', 'qty'])}])`,
    () => `AVG([orders.${pick(['amount', 'qty'])}])`,
    () => `MIN([orders.${pick(['amount', 'qty'])}])`,
    () => `MAX([orders.${pick(['amount', 'qty'])}])`,
    () => `COUNT([orders.${pick(['amount', 'qty'])}])`,
    () => 'SUM([net])',
    () => 'SUM([orders.amount]) / SUM([orders.qty])',
    () => 'MAX([orders.region])',
    () => (r() < 0.5 ? 'COUNTD([orders.region])' : 'COUNT()'),
  ];
  const kpi = r() < 0.15;
  const rowCount = kpi ? 0 : 1 + Math.floor(r() * 2);
  const rows: ShelfField[] = [];
  const usedSql = new Set<string>();
  for (let i = 0; i < rowCount; i++) {
    const sql = pick(categories)();
    if (usedSql.has(sql)) continue;
    usedSql.add(sql);
    rows.push({ id: `r${i}`, sql });
  }
  const columns: ShelfField[] = [];
  const measureCount = 1 + Math.floor(r() * 3);
  for (let i = 0; i < measureCount; i++) columns.push({ id: `m${i}`, sql: pick(measures)() });
  const filters: { path: string; filter: FilterSpec }[] = [];
  const filterPool: FilterSpec[] = [
    { sql: '[orders.region]', op: 'in', values: [pick(REGIONS), pick(REGIONS)] },
    { sql: '[orders.category]', op: 'ne', values: [pick(CATEGORIES)] },
    { sql: "DATETRUNC('month', [orders.date])", op: 'gte', values: ['2024-03-01'], value_type: 'date' },
    { sql: 'YEAR([orders.date])', op: 'eq', values: [2024], value_type: 'number' },
    { sql: '[orders.qty]', op: 'gt', values: [4], value_type: 'number' },
    { sql: '[orders.region]', op: 'is_null' },
    { sql: 'SUM([orders.amount])', op: 'gt', values: [1000], value_type: 'number' },
    // Date ranges on the raw dates: exact at a granularity when their bounds are its period boundaries.
    {
      sql: '[orders.date]',
      op: 'gte',
      values: [pick(['2024-03-01', '2024-04-01', '2024-03-15', '2024-01-01'])],
      value_type: 'date',
    },
    {
      sql: '[orders.date]',
      op: 'between',
      values: pick([
        ['2024-01-01', '2024-06-30'],
        ['2024-02-01', '2024-02-29'],
        ['2024-02-05', '2024-02-20'],
        [null, '2024-12-31'],
      ]),
      value_type: 'date',
    },
    {
      sql: '[orders.date]',
      op: pick(['lte', 'gt']),
      values: [pick(['2024-03-31', '2024-02-29', '2024-03-10'])],
      value_type: 'date',
    },
    {
      sql: '[orders.datetime]',
      op: pick(['lt', 'gte']),
      values: [pick(['2024-07-01 00:00:00', '2024-07-01 12:00:00', '2025-01-01'])],
      value_type: 'datetime',
    },
    { sql: '[orders.date]', op: 'is_null' },
    { sql: 'YEAR([orders.date]) - [from_year]', op: 'gte', values: [0], value_type: 'number' },
  ];
  if (r() < 0.5) filters.push({ path: 'filters[0]', filter: pick(filterPool) });
  if (r() < 0.2) filters.push({ path: 'filters[1]', filter: pick(filterPool) });
  const sorts = r() < 0.5 && columns.length ? [{ field_id: 'm0', direction: pick(['asc', 'desc'] as const) }] : [];
  const rowRule = r() < 0.3 ? [pick(REGIONS), pick(REGIONS)] : null;
  return {
    input: request({
      type: kpi ? 'kpi' : 'table',
      rows,
      columns,
      filters,
      sorts,
      pageSize: r() < 0.2 ? 3 : 1000,
      page: r() < 0.1 ? 2 : 1,
      parameters: r() < 0.5 ? { from_year: pick([2023, 2024, 2025]) } : {},
    }),
    rowRule,
  };
}
