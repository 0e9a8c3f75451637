import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { createConnector, type Connector } from '../../../../adapters/sources';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import type { DatasetModel } from '../../../../server/query/compile/dataset-model';
import type { WidgetQueryInput } from '../../../../server/query/compile/types';
import { matchRollup, whyNot } from '../../../../server/query/rollups/match';
import { conformPeriods } from '../../../../server/query/rollups/read-rollup';
import { buildQueryOf } from '../../../../server/rollups/build';
import { rollupColumns, writeRollupFile } from '../../../../server/rollups/file';
import type { RollupDefinition, ServedRollup } from '../../../../server/rollups/types';
import { F, ROLLUPS, orderRows, ordersModel, randomWidget, request, rng, served, type OrderRow } from './world';

/*
 * Matching and the rewrite, on DuckDB: the orders table and rollups built from it with the build's own query
 * (server/rollups/build.ts buildQueryOf) and file writer; every request is answered by the compiler over `orders`
 * (the live answer) and, when a rollup matches, by the rewritten query over the rollup's file: the rows must be equal.
 */

let dir: string;
let orders: Connector;
const rollups: { served: ServedRollup; connector: Connector }[] = [];

const sqlText = (v: string | null) => (v === null ? 'NULL' : `'${v.replaceAll("'", "''")}'`);
const rowSql = (o: OrderRow) =>
  `(${o.date === null ? 'NULL' : `DATE ${sqlText(o.date)}`}, TIMESTAMP ${sqlText(o.datetime)}, ${sqlText(o.region)}, ` +
  `${sqlText(o.category)}, ${o.amount ?? 'NULL'}, ${o.qty})`;

/** The orders live on DuckDB here: text compares as bytes, averages divide as DOUBLE. */
const LIVE = { liveDialect: 'duckdb' as const };

async function build(
  model: DatasetModel,
  def: RollupDefinition,
): Promise<{ served: ServedRollup; connector: Connector }> {
  const query = compileWidgetQuery(model, buildQueryOf(model, def), () => 'duckdb', { allRows: true });
  const result = await orders.query(query.sql, query.params, {});
  const columns = rollupColumns(model, def, 'duckdb');
  const byKey = new Map(query.columns.map((c, i) => [c.key, i]));
  const order = columns.map((c) => byKey.get(c.name)!);
  async function* rows() {
    for (const row of result.rows) yield order.map((i) => row[i]);
  }
  const file = join(dir, `rollup-${def.id}.duckdb`);
  const written = await writeRollupFile(file, columns, rows(), new AbortController().signal);
  return {
    served: served(def, written.rows),
    connector: createConnector('file', { file: { duckdb_path: file, tables: [] } }),
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rollup-match-'));
  const file = join(dir, 'orders.duckdb');
  const instance = await DuckDBInstance.create(file);
  const conn = await instance.connect();
  await conn.run(
    'CREATE TABLE orders (date DATE, datetime TIMESTAMP, region VARCHAR, category VARCHAR, amount DECIMAL(12,2), qty INTEGER)',
  );
  const data = orderRows(3000);
  for (let i = 0; i < data.length; i += 500)
    await conn.run(
      `INSERT INTO orders VALUES ${data
        .slice(i, i + 500)
        .map(rowSql)
        .join(', ')}`,
    );
  await conn.run('CHECKPOINT');
  conn.closeSync();
  instance.closeSync();
  orders = createConnector('file', { file: { duckdb_path: file, tables: ['orders'] } });
  for (const def of ROLLUPS) rollups.push(await build(ordersModel(), def));
});

afterAll(async () => {
  await orders?.close();
  for (const r of rollups) await r.connector.close();
  await rm(dir, { recursive: true, force: true });
});

const servedAll = () => rollups.map((r) => r.served);

function withRowRule(regions: string[] | null): DatasetModel {
  if (!regions) return ordersModel();
  return ordersModel({
    filters: [{ id: -1_000_001, fieldId: F.region, op: 'in', values: regions, valueType: 'string' }],
  });
}

/** Floats compared to 9 significant digits (sums in another order); everything else exactly. */
function normalise(rows: unknown[][]): unknown[][] {
  return rows.map((row) =>
    row.map((v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v)),
  );
}

async function live(model: DatasetModel, input: WidgetQueryInput): Promise<unknown[][]> {
  const q = compileWidgetQuery(model, input, () => 'duckdb');
  return (await orders.query(q.sql, q.params, {})).rows;
}

async function fromRollup(model: DatasetModel, input: WidgetQueryInput) {
  const plan = matchRollup(model, input, servedAll(), LIVE);
  if (!plan) return null;
  const connector = rollups.find((r) => r.served === plan.served)!.connector;
  const rows = (await connector.query(plan.query.sql, plan.query.params, {})).rows;
  return { plan, rows: conformPeriods(rows, plan.periodColumns, 'duckdb') };
}

describe('rollup matching', () => {
  it('answers a coarser date granularity from the smallest rollup that has it, with the live rows', async () => {
    const input = request({
      rows: [
        { id: 'q', sql: "DATETRUNC('quarter', [orders.date])" },
        { id: 'r', sql: '[orders.region]' },
      ],
      columns: [
        { id: 's', sql: 'SUM([orders.amount])' },
        { id: 'c', sql: 'COUNT([orders.amount])' },
      ],
      sorts: [{ field_id: 's', direction: 'desc' }],
    });
    const answer = await fromRollup(ordersModel(), input);
    expect(answer?.plan.served.definition.id).toBe(2); // by month and region: fewer rows than by day
    const sizes = Object.fromEntries(rollups.map((r) => [r.served.definition.id, r.served.load.rows]));
    expect(sizes[2]).toBeLessThan(sizes[1]);
    const expected = await live(ordersModel(), input);
    expect(expected.length).toBeGreaterThan(20);
    expect(normalise(answer!.rows)).toEqual(normalise(expected));
    expect(answer!.plan.query.columns).toEqual(compileWidgetQuery(ordersModel(), input, () => 'duckdb').columns);
  });

  it('re-aggregates AVG as SUM(sum)/SUM(count), COUNT as the sum of counts and a calculated measure', async () => {
    const input = request({
      type: 'kpi',
      columns: [
        { id: 'a', sql: 'AVG([orders.amount])' },
        { id: 'n', sql: 'SUM([net])' },
        { id: 'x', sql: 'MAX([orders.qty]) - MIN([orders.qty])' },
      ],
      filters: [{ path: 'filters[0]', filter: { sql: '[orders.category]', op: 'eq', values: ['B'] } }],
    });
    const answer = await fromRollup(ordersModel(), input);
    expect(answer?.plan.served.definition.id).toBe(1);
    expect(normalise(answer!.rows)).toEqual(normalise(await live(ordersModel(), input)));
  });

  it('COUNT over no rows is 0 from a rollup as from the source', async () => {
    const input = request({
      type: 'kpi',
      columns: [{ id: 'c', sql: 'COUNT([orders.amount])' }],
      filters: [{ path: 'filters[0]', filter: { sql: '[orders.region]', op: 'eq', values: ['Нигде'] } }],
    });
    const answer = await fromRollup(ordersModel(), input);
    expect(answer).not.toBeNull();
    expect(answer!.rows).toEqual([[0]]);
    expect(await live(ordersModel(), input)).toEqual([[0]]);
  });

  it('applies a row rule on a dimension to the rollup, and uses no rollup for a rule on anything else', async () => {
    const input = request({
      rows: [{ id: 'c', sql: '[orders.category]' }],
      columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
    });
    const onRegion = withRowRule(['Юг']);
    const answer = await fromRollup(onRegion, input);
    expect(answer?.plan.served.definition.id).toBe(1);
    expect(normalise(answer!.rows)).toEqual(normalise(await live(onRegion, input)));
    expect(normalise(answer!.rows)).not.toEqual(normalise(await live(ordersModel(), input)));
    const onQty = ordersModel({
      filters: [{ id: -1_000_002, fieldId: F.qty, op: 'in', values: ['1'], valueType: 'number' }],
    });
    expect(matchRollup(onQty, input, servedAll(), LIVE)).toBeNull();
  });

  it('does not answer what it cannot answer exactly', () => {
    const model = ordersModel();
    const bySum = (sql: string, extra: Partial<WidgetQueryInput> = {}) =>
      request({ rows: [{ id: 'r', sql }], columns: [{ id: 's', sql: 'SUM([orders.amount])' }], ...extra });
    const cases: [string, WidgetQueryInput][] = [
      [
        'a filter on a field that is no dimension',
        bySum('[orders.region]', {
          filters: [
            { path: 'filters[0]', filter: { sql: '[orders.qty]', op: 'gt', values: [3], value_type: 'number' } },
          ],
        }),
      ],
      ['COUNT DISTINCT', request({ columns: [{ id: 'd', sql: 'COUNTD([orders.category])' }] })],
      ['a finer granularity than any rollup', bySum("DATETRUNC('hour', [orders.datetime])")],
      ['a raw date when only truncated ones are kept', bySum('[orders.date]')],
      [
        'weeks from months',
        bySum("DATETRUNC('week', [orders.datetime])", {
          filters: [{ path: 'filters[0]', filter: { sql: '[orders.region]', op: 'eq', values: ['Юг'] } }],
        }),
      ],
      [
        'a listing of rows',
        request({ rows: [{ id: 'r', sql: '[orders.region]' }], columns: [{ id: 'a', sql: '[orders.qty]' }] }),
      ],
      [
        'a measure of a field the rollups do not aggregate',
        request({ columns: [{ id: 'a', sql: 'SUM([orders.amount] + 1)' }] }),
      ],
    ];
    for (const [what, input] of cases) expect(matchRollup(model, input, servedAll(), LIVE), what).toBeNull();
    // The rollup by month cannot give weeks or days of the month; the one by day can.
    const dayOfMonth = request({
      rows: [
        { id: 'r', sql: 'DAY([orders.date])' },
        { id: 'g', sql: '[orders.region]' },
      ],
      columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
    });
    expect(whyNot(model, dayOfMonth, servedAll()[1], LIVE)).toMatch(/not a dimension/);
    expect(whyNot(model, dayOfMonth, servedAll()[0], LIVE)).toBeNull();
    expect(whyNot(model, bySum("DATETRUNC('week', [orders.date])"), servedAll()[1], LIVE)).toMatch(/not a dimension/);
    expect(whyNot(model, bySum("DATETRUNC('week', [orders.date])"), servedAll()[0], LIVE)).toBeNull();
  });

  it('a date range on the raw date is answered by a rollup of its periods only when its bounds are period boundaries', async () => {
    const model = ordersModel();
    const byRegion = (filter: WidgetQueryInput['filters'][number]['filter']) =>
      request({
        rows: [{ id: 'r', sql: '[orders.region]' }],
        columns: [{ id: 's', sql: 'SUM([orders.amount])' }],
        filters: [{ path: 'filters[0]', filter }],
      });
    const quarter = byRegion({
      sql: '[orders.date]',
      op: 'between',
      values: ['2024-04-01', '2024-06-30'],
      value_type: 'date',
    });
    const byMonth = servedAll()[1];
    expect(whyNot(model, quarter, byMonth, LIVE)).toBeNull();
    const answer = await fromRollup(model, quarter);
    expect(answer?.plan.served.definition.id).toBe(2);
    expect(normalise(answer!.rows)).toEqual(normalise(await live(model, quarter)));
    // The 15th splits a month: only the rollup by day answers it.
    const mid = byRegion({ sql: '[orders.date]', op: 'gte', values: ['2024-03-15'], value_type: 'date' });
    expect(whyNot(model, mid, byMonth, LIVE)).not.toBeNull();
    expect(matchRollup(model, mid, servedAll(), LIVE)?.served.definition.id).toBe(1);
    // A datetime compared at noon: no period start tells it.
    const noon = byRegion({
      sql: '[orders.datetime]',
      op: 'lt',
      values: ['2024-07-01 12:00:00'],
      value_type: 'datetime',
    });
    expect(matchRollup(model, noon, servedAll(), LIVE)).toBeNull();
  });

  it('does not use a dimension or measure whose definition reads a parameter', () => {
    const model = ordersModel({
      parameters: [
        {
          id: 1,
          name: 'k',
          primitiveType: 'float',
          defaultValue: '1',
          domain: { kind: 'any' },
          order: 0,
        },
      ],
    });
    model.fields = model.fields.map((f) => (f.id === F.net ? { ...f, formula: '[orders.amount] * [k]' } : f));
    const def = ROLLUPS[0];
    const input = request({
      calculatedFields: [{ path: 'calculatedFields[0]', def: { name: 'net', sql: '[orders.amount] * [k]' } }],
      columns: [{ id: 'n', sql: 'SUM([net])' }],
      parameters: { k: 1 },
    });
    expect(whyNot(model, input, served(def, 10), LIVE)).not.toBeNull();
    // The same measure over a field without a parameter matches.
    expect(
      whyNot(model, request({ columns: [{ id: 'n', sql: 'SUM([orders.qty])' }] }), served(def, 10), LIVE),
    ).toBeNull();
  });

  it('gives the live rows for 300 random widgets whenever a rollup answers (seeded)', async () => {
    const r = rng(2026);
    let matched = 0;
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const { input, rowRule } = randomWidget(r);
      const model = withRowRule(rowRule);
      let expected: unknown[][];
      try {
        expected = await live(model, input);
      } catch {
        // A request the compiler refuses (an aggregate filter on a listing…): no rollup may answer it either.
        expect(matchRollup(model, input, servedAll(), LIVE), JSON.stringify(input)).toBeNull();
        continue;
      }
      const answer = await fromRollup(model, input);
      if (!answer) {
        refused++;
        continue;
      }
      matched++;
      expect(normalise(answer.rows), JSON.stringify({ input, rowRule, sql: answer.plan.query.sql })).toEqual(
        normalise(expected),
      );
    }
    // The generator is made so that both kinds are frequent.
    expect(matched).toBeGreaterThan(60);
    expect(refused).toBeGreaterThan(30);
  });
});
