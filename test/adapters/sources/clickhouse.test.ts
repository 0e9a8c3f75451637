import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, createConnector, type Connector } from '../../../adapters/sources';
import { clickhouseSettings, closedPort, randomName, silentServer } from './servers';

describe('clickhouse connector (18.16 over HTTP)', () => {
  let c: Connector;
  const table = randomName();

  beforeAll(async () => {
    c = createConnector('clickhouse', clickhouseSettings());
    await c.query(
      `CREATE TABLE default.${table} (id Int32, name String, amount Nullable(Decimal(10, 2)), big UInt64,
         day Nullable(Date), ts Nullable(DateTime), msk DateTime('Europe/Moscow'), flag UInt8, tags Array(String))
       ENGINE = MergeTree ORDER BY id`,
      [],
    );
    await c.query(
      `INSERT INTO default.${table} VALUES
        (1, 'один\\tтаб', 12.50, 18446744073709551615, '2024-01-02', '2024-01-02 10:11:12', '2024-01-02 10:00:00', 1, ['a','b']),
        (2, 'two', NULL, 42, NULL, NULL, '2024-07-01 00:00:00', 0, [])`,
      [],
    );
    await c.query(`CREATE VIEW default.${table}_v AS SELECT id FROM default.${table}`, []);
  });

  afterAll(async () => {
    await c.query(`DROP TABLE IF EXISTS default.${table}_v`, []);
    await c.query(`DROP TABLE IF EXISTS default.${table}`, []);
    await c.close();
  });

  it('checks the connection', async () => {
    await expect(c.check()).resolves.toBeUndefined();
  });

  it('lists databases, tables with views, and columns with types', async () => {
    const schemas = await c.listSchemas();
    expect(schemas).toContain('default');
    expect(schemas).not.toContain('system');
    const tables = await c.listTables('default');
    expect(tables).toContainEqual({ schema: 'default', name: table, kind: 'table' });
    expect(tables).toContainEqual({ schema: 'default', name: `${table}_v`, kind: 'view' });
    const cols = await c.listColumns('default', table);
    expect(cols.map((x) => [x.name, x.db_type, x.primitive_type, x.nullable])).toEqual([
      ['id', 'Int32', 'integer', false],
      ['name', 'String', 'string', false],
      ['amount', 'Nullable(Decimal(10, 2))', 'float', true],
      ['big', 'UInt64', 'integer', false],
      ['day', 'Nullable(Date)', 'date', true],
      ['ts', 'Nullable(DateTime)', 'datetime', true],
      ['msk', "DateTime('Europe/Moscow')", 'datetime', false],
      ['flag', 'UInt8', 'integer', false],
      ['tags', 'Array(String)', 'unknown', false],
    ]);
    await expect(c.listColumns('default', 'no_such_table')).rejects.toMatchObject({ kind: 'query' });
  });

  it('normalises values the common way (DateTime with a zone comes out in UTC)', async () => {
    const r = await c.query(
      `SELECT id, name, amount, big, day, ts, msk, flag, tags FROM default.${table} ORDER BY id`,
      [],
    );
    expect(r.columns.map((x) => x.primitive_type)).toEqual([
      'integer',
      'string',
      'float',
      'integer',
      'date',
      'datetime',
      'datetime',
      'integer',
      'unknown',
    ]);
    expect(r.rows).toEqual([
      [
        1,
        'один\tтаб',
        12.5,
        '18446744073709551615',
        '2024-01-02',
        '2024-01-02T10:11:12',
        '2024-01-02T07:00:00',
        1,
        "['a','b']",
      ],
      [2, 'two', null, 42, null, null, '2024-06-30T21:00:00', 0, '[]'],
    ]);
  });

  it('takes no parameters: literals are inlined by the query compiler', async () => {
    await expect(c.query('SELECT 1', [1])).rejects.toMatchObject({ kind: 'query' });
  });

  it('applies the row limit and says the result was truncated', async () => {
    const r = await c.query('SELECT number FROM system.numbers LIMIT 1000', [], { limit: 10 });
    expect(r.rows).toHaveLength(10);
    expect(r.truncated).toBe(true);
    const exact = await c.query('SELECT number FROM system.numbers LIMIT 10', [], { limit: 10 });
    expect(exact.truncated).toBe(false);
    expect(exact.rows).toHaveLength(10);
  });

  it('streams rows without reading the whole result first', async () => {
    const started = Date.now();
    const seen: unknown[][] = [];
    for await (const row of c.stream('SELECT number FROM system.numbers', [])) {
      seen.push(row);
      if (seen.length === 5) break;
    }
    expect(seen).toEqual([[0], [1], [2], [3], [4]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    let n = 0;
    for await (const _ of c.stream('SELECT number FROM system.numbers LIMIT 100000', [])) n++;
    expect(n).toBe(100_000);
  });

  it('cancels a query on timeout and on abort', async () => {
    let started = Date.now();
    await expect(c.query('SELECT count() FROM system.numbers', [], { timeoutMs: 500 })).rejects.toMatchObject({
      kind: 'timeout',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    started = Date.now();
    await expect(c.query('SELECT count() FROM system.numbers', [], { signal: ac.signal })).rejects.toMatchObject({
      kind: 'cancelled',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, 300));
    const running = await c.query(
      `SELECT count() FROM system.processes WHERE query LIKE 'SELECT count() FROM system.numbers%'`,
      [],
    );
    expect(running.rows).toEqual([[0]]);
  });

  it('reports errors with the server text, also when they come after the first rows', async () => {
    const err = await c.query('SELECT no_such_column', []).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err).toMatchObject({ kind: 'query', message: expect.stringContaining('no_such_column') });
    expect(err.message).not.toContain('e.what()');
    const late = await c.query('SELECT throwIf(number = 200000) FROM system.numbers LIMIT 300000', []).catch((e) => e);
    expect(late).toMatchObject({ kind: 'query', message: expect.stringContaining('throwIf') });
  });

  it('turns SET statements of initial_sql into settings of every request', async () => {
    const s = createConnector(
      'clickhouse',
      clickhouseSettings({ initial_sql: 'SET max_threads = 3; SET max_block_size = 1234' }),
    );
    try {
      const r = await s.query(
        `SELECT name, value FROM system.settings WHERE name IN ('max_threads', 'max_block_size') ORDER BY name`,
        [],
      );
      expect(r.rows).toEqual([
        ['max_block_size', '1234'],
        ['max_threads', '3'],
      ]);
    } finally {
      await s.close();
    }
    const broken = createConnector('clickhouse', clickhouseSettings({ initial_sql: 'SELEC 1' }));
    await expect(broken.check()).rejects.toMatchObject({
      kind: 'settings',
      message: expect.stringContaining('initial_sql'),
    });
    await broken.close();
  });

  it('fails with the driver text on a wrong password', async () => {
    const s = createConnector('clickhouse', clickhouseSettings({ password: 'wrong-password' }));
    await expect(s.check()).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('Wrong password') });
    await s.close();
  });

  it('fails on an unknown database at check time', async () => {
    const s = createConnector('clickhouse', clickhouseSettings({ db: 'no_such_db_x' }));
    await expect(s.check()).rejects.toMatchObject({
      kind: 'connection',
      message: expect.stringContaining('no_such_db_x'),
    });
    await s.close();
  });

  it('fails fast when the server cannot be reached', async () => {
    const refused = createConnector('clickhouse', clickhouseSettings({ http_port: await closedPort() }));
    await expect(refused.check()).rejects.toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(/^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/),
    });
    await refused.close();

    const silent = await silentServer();
    const hung = createConnector('clickhouse', clickhouseSettings({ http_port: silent.port }), {
      connectTimeoutMs: 1000,
    });
    const started = Date.now();
    await expect(hung.check()).rejects.toMatchObject({ kind: 'connection' });
    expect(Date.now() - started).toBeLessThan(4_000);
    await hung.close();
    await silent.close();
  });
});
