// The compiler's SQL runs for real on every dialect, through the source connectors, with the same data: the same
// request must give the same numbers everywhere, and those numbers must match what JS computes from the rows.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, type Connector } from '../../../../adapters/sources';
import type { DatasetModel } from '../../../../server/query/compile/dataset-model';
import { compileFieldValuesQuery } from '../../../../server/query/compile/compile-dataset';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import type { Dialect } from '../../../../server/query/expr';
import type { WidgetQueryInput } from '../../../../server/query/compile/types';
import { clickhouseSettings, mysqlSettings, pgSettings, randomName } from '../../../adapters/sources/servers';
import { object, physical, request, shelf } from './fixtures';

const REGIONS = [
  [1, 'Север'],
  [2, 'Юг'],
  [3, "О'Хара"],
] as const;
const PRODUCTS = ['чай', 'кофе', 'какао', 'сок'];
interface Sale {
  id: number;
  region_id: number;
  product: string;
  amount: number | null;
  qty: number;
  sold_on: string;
}
const SALES: Sale[] = Array.from({ length: 240 }, (_, i) => ({
  id: i + 1,
  region_id: (i % 4) + 1, // region 4 has no row in regions: the LEFT JOIN keeps it with a NULL name
  product: PRODUCTS[(i * 7) % 4],
  amount: i % 13 === 0 ? null : Math.round(((i * 37) % 1000) * 1.25) / 100,
  qty: (i % 5) + 1,
  sold_on: `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
}));

const sql = (v: unknown) =>
  v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
const saleValues = SALES.map(
  (s) => `(${[s.id, s.region_id, s.product, s.amount, s.qty, s.sold_on].map(sql).join(', ')})`,
).join(', ');
const regionValues = REGIONS.map((r) => `(${r.map(sql).join(', ')})`).join(', ');

const sales = randomName('sales');
const regions = randomName('regions');

function model(schema: string): DatasetModel {
  const fields = [
    physical(1, 'id', 'integer'),
    physical(1, 'region_id', 'integer'),
    physical(1, 'product', 'string'),
    physical(1, 'amount', 'float'),
    physical(1, 'qty', 'integer'),
    physical(1, 'sold_on', 'date'),
    physical(2, 'id', 'integer'),
    physical(2, 'name', 'string'),
  ];
  return {
    id: 1,
    name: 'live',
    workspaceId: 1,
    live: true,
    dataSourceIds: [1],
    version: 1,
    updatedAt: new Date(),
    objects: [object(1, 's', { schema, table: sales }), object(2, 'r', { schema, table: regions })],
    fields,
    relations: [
      {
        id: 1,
        leftObjectId: 1,
        rightObjectId: 2,
        joinType: 'left',
        conditions: [{ leftFieldId: fields[1].id, rightFieldId: fields[6].id }],
      },
    ],
    hierarchies: [],
    filters: [],
    parameters: [{ id: 1, name: 'rate', primitiveType: 'float', defaultValue: '2', domain: { kind: 'any' }, order: 0 }],
  };
}

const SCHEMA: Record<Dialect, string> = { postgresql: 'public', mysql: 'test', clickhouse: 'default', duckdb: 'main' };
const connectors = {} as Record<Dialect, Connector>;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-live-'));
  const duckPath = join(dir, 'live.duckdb');
  const inst = await DuckDBInstance.create(duckPath);
  const w = await inst.connect();
  await w.run(
    `CREATE TABLE ${sales} (id INTEGER, region_id INTEGER, product VARCHAR, amount DECIMAL(10,2), qty INTEGER, sold_on DATE)`,
  );
  await w.run(`CREATE TABLE ${regions} (id INTEGER, name VARCHAR)`);
  await w.run(`INSERT INTO ${sales} VALUES ${saleValues}`);
  await w.run(`INSERT INTO ${regions} VALUES ${regionValues}`);
  await w.run('CHECKPOINT');
  w.closeSync();
  inst.closeSync();
  connectors.duckdb = createConnector('file', { file: { duckdb_path: duckPath, tables: [sales, regions] } });
  connectors.postgresql = createConnector('postgresql', pgSettings());
  connectors.mysql = createConnector('mysql', mysqlSettings());
  connectors.clickhouse = createConnector('clickhouse', clickhouseSettings());
  const ddl: Record<Exclude<Dialect, 'duckdb'>, [string, string]> = {
    postgresql: [
      `(id int, region_id int, product text, amount numeric(10,2), qty int, sold_on date)`,
      `(id int, name text)`,
    ],
    mysql: [
      `(id int, region_id int, product varchar(20), amount decimal(10,2), qty int, sold_on date)`,
      `(id int, name varchar(20))`,
    ],
    clickhouse: [
      `(id Int32, region_id Int32, product String, amount Nullable(Decimal(10, 2)), qty Int32, sold_on Date) ENGINE = Memory`,
      `(id Int32, name String) ENGINE = Memory`,
    ],
  };
  for (const [d, [s, r]] of Object.entries(ddl) as [Exclude<Dialect, 'duckdb'>, [string, string]][]) {
    const c = connectors[d];
    await c.query(`CREATE TABLE ${sales} ${s}`, []);
    await c.query(`CREATE TABLE ${regions} ${r}`, []);
    // ClickHouse 18.16 wants `\'` in VALUES rather than a doubled quote.
    const esc = (v: string) => (d === 'clickhouse' ? v.replaceAll("''", "\\'") : v);
    await c.query(`INSERT INTO ${sales} VALUES ${esc(saleValues)}`, []);
    await c.query(`INSERT INTO ${regions} VALUES ${esc(regionValues)}`, []);
  }
}, 120_000);

afterAll(async () => {
  for (const d of ['postgresql', 'mysql', 'clickhouse'] as const) {
    await connectors[d]?.query(`DROP TABLE IF EXISTS ${sales}`, []).catch(() => {});
    await connectors[d]?.query(`DROP TABLE IF EXISTS ${regions}`, []).catch(() => {});
  }
  await Promise.all(Object.values(connectors).map((c) => c.close()));
  await rm(dir, { recursive: true, force: true });
});

/** Runs the request on every dialect; rows as objects keyed by shelf id. */
async function everywhere(req: WidgetQueryInput) {
  const out = {} as Record<Dialect, Record<string, unknown>[]>;
  for (const d of Object.keys(SCHEMA) as Dialect[]) {
    const q = compileWidgetQuery(model(SCHEMA[d]), req, () => d);
    const r = await connectors[d].query(q.sql, q.params, { limit: q.fetchLimit });
    out[d] = r.rows.map((row) => Object.fromEntries(q.columns.map((c, i) => [c.key, row[i]])));
  }
  return out;
}

const round = (n: number) => Math.round(n * 100) / 100;
const sum = (xs: (number | null)[]) => round(xs.reduce<number>((a, b) => a + (b ?? 0), 0));
const regionName = (id: number) => REGIONS.find((r) => r[0] === id)?.[1] ?? null;

describe('the same widget request on PostgreSQL, MariaDB, ClickHouse and DuckDB', () => {
  it('grouped over a join, sorted by a measure, paged', async () => {
    const req = request({
      rows: [shelf('region', '[r.name]')],
      columns: [shelf('total', 'SUM([s.amount])'), shelf('n', 'COUNT()'), shelf('products', 'COUNTD([s.product])')],
      sorts: [{ field_id: 'total', direction: 'desc' }],
      pageSize: 3,
    });
    const expected = [1, 2, 3, 4]
      .map((id) => {
        const rows = SALES.filter((s) => s.region_id === id);
        return {
          region: regionName(id),
          total: sum(rows.map((s) => s.amount)),
          n: rows.length,
          products: new Set(rows.map((s) => s.product)).size,
        };
      })
      .sort((a, b) => b.total - a.total);
    const results = await everywhere(req);
    for (const [d, rows] of Object.entries(results)) {
      expect({ d, rows: rows.map((r) => ({ ...r, total: round(r.total as number) })) }).toEqual({
        d,
        rows: expected.slice(0, 4),
      });
    }
    const page2 = await everywhere({ ...req, page: 2 });
    for (const [d, rows] of Object.entries(page2))
      expect({ d, region: rows[0].region }).toEqual({ d, region: expected[3].region });
  });

  it('filters AND-ed (WHERE and HAVING), a parameter, a calculated field, KPI', async () => {
    const req = request({
      rows: [shelf('p', '[s.product]')],
      columns: [shelf('scaled', 'SUM([s.qty] * [rate])'), shelf('avg', '[Средний чек]')],
      filters: [
        {
          path: 'filters[0]',
          filter: { sql: '[s.sold_on]', op: 'between', values: ['2024-03-01', '2024-08-31'], value_type: 'date' },
        },
        { path: 'filters[1]', filter: { sql: '[s.product]', op: 'in', values: ['чай', 'кофе', 'сок'] } },
        { path: 'filters[2]', filter: { sql: 'COUNT()', op: 'gt', values: [5], value_type: 'integer' } },
      ],
      calculatedFields: [
        { path: 'calculatedFields[0]', def: { name: 'Средний чек', sql: 'SUM([s.amount]) / COUNT([s.amount])' } },
      ],
      parameters: { rate: 1.5 },
    });
    const kept = SALES.filter(
      (s) => s.sold_on >= '2024-03-01' && s.sold_on <= '2024-08-31' && ['чай', 'кофе', 'сок'].includes(s.product),
    );
    const expected = [...new Set(kept.map((s) => s.product))]
      .sort()
      .map((p) => {
        const rows = kept.filter((s) => s.product === p);
        const amounts = rows.map((s) => s.amount).filter((a): a is number => a !== null);
        return {
          p,
          n: rows.length,
          scaled: round(rows.reduce((a, s) => a + s.qty * 1.5, 0)),
          avg: sum(amounts) / amounts.length,
        };
      })
      .filter((x) => x.n > 5)
      .map(({ n: _n, ...x }) => x);
    expect(expected.length).toBeGreaterThan(0);
    const results = await everywhere(req);
    for (const [d, rows] of Object.entries(results)) {
      // ClickHouse and MySQL order Cyrillic by bytes, PostgreSQL by collation: compare as sets keyed by product.
      const got = rows
        .map((r) => ({ p: r.p, scaled: round(r.scaled as number), avg: r.avg as number }))
        .sort((a, b) => String(a.p).localeCompare(String(b.p)));
      const want = [...expected].sort((a, b) => a.p.localeCompare(b.p));
      expect({ d, got: got.map(({ avg: _a, ...x }) => x) }).toEqual({ d, got: want.map(({ avg: _a, ...x }) => x) });
      got.forEach((g, i) => expect(g.avg, `${d} ${g.p}`).toBeCloseTo(want[i].avg, 9));
    }
    const kpi = await everywhere(
      request({
        type: 'kpi',
        columns: [shelf('t', 'SUM([s.amount])'), shelf('q', 'MAX([s.qty])')],
        filters: [
          { path: 'f', filter: { sql: '[s.product]', op: 'in', values: ['x'] } },
          { path: 'g', filter: { sql: '[s.product]', op: 'in', values: ['чай'] } },
        ],
      }),
    );
    // Mutually exclusive filters: an empty result, aggregated to NULL on every dialect (ClickHouse included).
    for (const [d, rows] of Object.entries(kpi)) expect({ d, rows }).toEqual({ d, rows: [{ t: null, q: null }] });
  });

  it('distinct field values with a search', async () => {
    for (const d of Object.keys(SCHEMA) as Dialect[]) {
      const m = model(SCHEMA[d]);
      const q = compileFieldValuesQuery(m, { fieldId: m.fields[2].id, query: 'КА', limit: 10 }, () => d);
      const r = await connectors[d].query(q.sql, q.params);
      expect({ d, values: r.rows.map((x) => x[0]) }).toEqual({ d, values: ['какао'] });
    }
  });
});
