import { afterAll, beforeAll, expect, it } from 'vitest';
import { createConnector } from '../../../adapters/sources';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok, type RestResponse } from '../../support/rest';
import { clickhouseSettings, randomName } from '../../adapters/sources/servers';
import { createSource, dropTable, exec } from '../data-sources/helpers';
import type { DatasetDetails } from '../datasets/helpers';
import { createObjectDataset } from '../etl/world';
import type { FlatData, WidgetView } from '../widgets/world';
import { buildRollup, rollupRows, sortRows, type RollupView } from './world';

/*
 * A live dataset on a real ClickHouse (18.16) source: its rollup is one GROUP BY pushed down to ClickHouse (months
 * by toStartOfMonth, NULLs kept as their own group), and its rows are those of the same GROUP BY run directly through
 * the ClickHouse connector (values normalised as every read normalises them). A widget the rollup covers is answered
 * from it (X-Data-Path: rollup) with the rows ClickHouse gives live once the rollup is disabled.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
const table = randomName('r_orders');
let datasetId: number;
let field: (name: string) => number;
const owner = () => cast.tokens.wsAdmin!;
const dataPath = (res: RestResponse) => res.headers['x-data-path'];

/** Runs one query straight at ClickHouse through the platform's connector, as the rollup's rows are normalised. */
async function direct(sql: string): Promise<unknown[][]> {
  const c = createConnector('clickhouse', clickhouseSettings());
  try {
    return (await c.query(sql, [])).rows;
  } finally {
    await c.close();
  }
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  await exec(
    'clickhouse',
    `CREATE TABLE default.${table} (id Int32, city Nullable(String), amount Nullable(Decimal(12, 2)),
       qty Int32, placed Nullable(Date)) ENGINE = MergeTree ORDER BY id`,
  );
  const cities = ["'Москва'", "'Казань'", `'a,b "c"'`, 'NULL'];
  const rows = Array.from({ length: 300 }, (_, i) => {
    const amount = i % 13 === 0 ? 'NULL' : (((i * 37) % 1000) / 100 + 0.05).toFixed(2);
    const placed =
      i % 17 === 0
        ? 'NULL'
        : `'2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}'`;
    return `(${i + 1}, ${cities[Math.floor(i / 12) % cities.length]}, ${amount}, ${(i % 5) + 1}, ${placed})`;
  });
  await exec('clickhouse', `INSERT INTO default.${table} VALUES ${rows.join(', ')}`);
  const source = await createSource(api, owner(), 'clickhouse', { workspace_id: cast.workspaceId });
  datasetId = await createObjectDataset(api, owner(), {
    name: randomName('ch'),
    workspaceId: cast.workspaceId,
    sourceId: source.id,
    object: { name: 'orders', schema: 'default', table },
    columns: [
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
      ['qty', 'integer'],
      ['placed', 'date'],
    ],
  });
  const details = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner()));
  field = (name) => details.fields.find((x) => x.name === name)!.id;
});
afterAll(() => dropTable('clickhouse', table));

/** city, month placed; SUM/COUNT/MIN/MAX of amount, AVG of qty, COUNT of id. */
function definition(enabled = true) {
  return {
    name: 'по городам и месяцам',
    dimensions: [{ field_id: field('city') }, { field_id: field('placed'), granularity: 'month' }],
    measures: [
      { field_id: field('amount'), aggregation: 'SUM' },
      { field_id: field('amount'), aggregation: 'COUNT' },
      { field_id: field('amount'), aggregation: 'MIN' },
      { field_id: field('amount'), aggregation: 'MAX' },
      { field_id: field('qty'), aggregation: 'AVG' },
      { field_id: field('id'), aggregation: 'COUNT' },
    ],
    refresh: { mode: 'schedule', cron: '0 4 * * *', timezone: 'Asia/Novosibirsk' },
    enabled,
  };
}

let rollup: RollupView;

it('builds a rollup whose rows are the same GROUP BY run at ClickHouse directly', async () => {
  rollup = ok<RollupView>(await api.post(`/api/dataset/${datasetId}/rollups`, definition(), owner()));
  const build = await buildRollup(api, owner(), datasetId, rollup.id);
  const expected = sortRows(
    await direct(
      `SELECT city, toStartOfMonth(placed) AS m,
              sum(amount), count(amount), min(amount), max(amount), sum(qty), count(qty), count(id), count()
         FROM default.${table} GROUP BY city, m`,
    ),
  );
  expect(expected.length).toBeGreaterThan(40); // 4 cities (one NULL) by 12 months and NULL
  expect(build.rows).toBe(expected.length);
  expect(await rollupRows(t.deps, datasetId, rollup.id)).toEqual(expected);
});

it('answers a widget from the rollup with the rows live gives once the rollup is disabled', async () => {
  const widget = ok<WidgetView>(
    await api.post(
      '/api/widget',
      {
        name: 'w',
        type: 'table',
        dataset_id: datasetId,
        rows: [
          { id: 'q', sql: "DATETRUNC('quarter', [orders.placed])" },
          { id: 'c', sql: '[orders.city]' },
        ],
        columns: [
          { id: 's', sql: 'SUM([orders.amount])' },
          { id: 'n', sql: 'COUNT([orders.id])' },
          { id: 'lo', sql: 'MIN([orders.amount])' },
          { id: 'hi', sql: 'MAX([orders.amount])' },
          { id: 'a', sql: 'AVG([orders.qty])' },
        ],
        sorts: [
          { field_id: 'q', direction: 'asc' },
          { field_id: 'c', direction: 'asc' },
        ],
      },
      owner(),
    ),
  );
  const read = () => api.post(`/api/widget/${widget.id}/data`, { page_size: 1000 }, owner());
  // The rollup keeps the Decimal sums as DECIMAL and re-adds them exactly, as ClickHouse adds the rows; avg() of an
  // integer is an exact sum over an exact count there and here: the same numbers.
  const fromRollup = await read();
  expect(dataPath(fromRollup), JSON.stringify(fromRollup.body).slice(0, 500)).toBe('rollup');
  ok(await api.put(`/api/dataset/${datasetId}/rollups/${rollup.id}`, definition(false), owner()));
  const live = await read();
  expect(dataPath(live)).toBe('live');

  const [a, b] = [ok<FlatData>(fromRollup), ok<FlatData>(live)];
  expect(a.rows.length).toBeGreaterThan(12);
  expect(a.page).toEqual(b.page);
  expect(a.rows).toEqual(b.rows);
  expect(a.rows.some((r) => r.c === null) && a.rows.some((r) => r.q === null)).toBe(true);
});
