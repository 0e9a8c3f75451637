// The query engine compares results across dialects: the same stored data must come out identically
// from every kind. (Booleans are left out: ClickHouse 18.16 has no boolean type, it stores UInt8.)
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, type Connector } from '../../../adapters/sources';
import { clickhouseSettings, mysqlSettings, pgSettings, randomName } from './servers';

const ROWS = `(1, 'a', 12.50, 9007199254740993, '2024-01-02', '2024-01-02 10:11:12'),
  (2, 'б', NULL, -5, NULL, NULL),
  (3, 'c', 0.10, 0, '1999-12-31', '2000-01-01 00:00:00')`;

describe('the same data from every kind', () => {
  const table = randomName('x');
  let dir: string;
  const connectors: Record<string, Connector> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cross-dialect-'));
    const duckPath = join(dir, 'x.duckdb');
    const inst = await DuckDBInstance.create(duckPath);
    const w = await inst.connect();
    await w.run(
      `CREATE TABLE ${table} (id INTEGER, name VARCHAR, amount DECIMAL(10,2), big BIGINT, day DATE, ts TIMESTAMP)`,
    );
    await w.run(`INSERT INTO ${table} VALUES ${ROWS}`);
    await w.run('CHECKPOINT');
    w.closeSync();
    inst.closeSync();

    connectors.postgresql = createConnector('postgresql', pgSettings());
    connectors.mysql = createConnector('mysql', mysqlSettings());
    connectors.clickhouse = createConnector('clickhouse', clickhouseSettings());
    connectors.file = createConnector('file', { file: { duckdb_path: duckPath, tables: [table] } });
    await connectors.postgresql.query(
      `CREATE TABLE ${table} (id int, name text, amount numeric(10,2), big bigint, day date, ts timestamp)`,
      [],
    );
    await connectors.postgresql.query(`INSERT INTO ${table} VALUES ${ROWS}`, []);
    await connectors.mysql.query(
      `CREATE TABLE ${table} (id int, name varchar(20), amount decimal(10,2), big bigint, day date, ts datetime)`,
      [],
    );
    await connectors.mysql.query(`INSERT INTO ${table} VALUES ${ROWS}`, []);
    await connectors.clickhouse.query(
      `CREATE TABLE ${table} (id Int32, name String, amount Nullable(Decimal(10, 2)), big Int64, day Nullable(Date),
         ts Nullable(DateTime)) ENGINE = Memory`,
      [],
    );
    await connectors.clickhouse.query(`INSERT INTO ${table} VALUES ${ROWS}`, []);
  });

  afterAll(async () => {
    await connectors.postgresql?.query(`DROP TABLE IF EXISTS ${table}`, []);
    await connectors.mysql?.query(`DROP TABLE IF EXISTS ${table}`, []);
    await connectors.clickhouse?.query(`DROP TABLE IF EXISTS ${table}`, []);
    await Promise.all(Object.values(connectors).map((c) => c.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('reads rows identically', async () => {
    const expected = [
      [1, 'a', 12.5, '9007199254740993', '2024-01-02', '2024-01-02T10:11:12'],
      [2, 'б', null, -5, null, null],
      [3, 'c', 0.1, 0, '1999-12-31', '2000-01-01T00:00:00'],
    ];
    for (const [kind, c] of Object.entries(connectors)) {
      const r = await c.query(`SELECT id, name, amount, big, day, ts FROM ${table} ORDER BY id`, []);
      expect({ kind, rows: r.rows }).toEqual({ kind, rows: expected });
      expect({ kind, types: r.columns.map((x) => x.primitive_type) }).toEqual({
        kind,
        types: ['integer', 'string', 'float', 'integer', 'date', 'datetime'],
      });
    }
  });

  it('aggregates identically', async () => {
    for (const [kind, c] of Object.entries(connectors)) {
      const r = await c.query(`SELECT count(*) AS n, sum(amount) AS s, max(day) AS d, min(ts) AS t FROM ${table}`, []);
      expect({ kind, rows: r.rows }).toEqual({ kind, rows: [[3, 12.6, '2024-01-02', '2000-01-01T00:00:00']] });
    }
  });
});
