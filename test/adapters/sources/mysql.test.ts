import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, createConnector, type Connector } from '../../../adapters/sources';
import { closedPort, mysqlSettings, randomName, silentServer } from './servers';

describe('mysql connector (MariaDB)', () => {
  let c: Connector;
  const table = randomName();

  beforeAll(async () => {
    c = createConnector('mysql', mysqlSettings());
    await c.query(
      `CREATE TABLE test.${table} (id int PRIMARY KEY, name varchar(50) NOT NULL, amount decimal(10,2), big bigint unsigned,
         day date, ts datetime(3), stamp timestamp NULL, flag boolean, data blob, kind enum('a','b'))`,
      [],
    );
    await c.query(
      `INSERT INTO test.${table} VALUES
        (1, 'один', 12.50, 18446744073709551615, '2024-01-02', '2024-01-02 10:11:12.5', '2024-01-02 10:00:00', true, x'ff00', 'a'),
        (2, 'two', NULL, 42, NULL, NULL, NULL, false, NULL, NULL)`,
      [],
    );
    await c.query(`CREATE VIEW test.${table}_v AS SELECT id FROM test.${table}`, []);
  });

  afterAll(async () => {
    await c.query(`DROP VIEW IF EXISTS test.${table}_v`, []);
    await c.query(`DROP TABLE IF EXISTS test.${table}`, []);
    await c.close();
  });

  it('checks the connection', async () => {
    await expect(c.check()).resolves.toBeUndefined();
  });

  it('lists schemas, tables with views, and columns with types', async () => {
    const schemas = await c.listSchemas();
    expect(schemas).toContain('test');
    expect(schemas).not.toContain('information_schema');
    const tables = await c.listTables('test');
    expect(tables).toContainEqual({ schema: 'test', name: table, kind: 'table' });
    expect(tables).toContainEqual({ schema: 'test', name: `${table}_v`, kind: 'view' });
    const cols = await c.listColumns('test', table);
    expect(cols.map((x) => [x.name, x.primitive_type, x.nullable])).toEqual([
      ['id', 'integer', false],
      ['name', 'string', false],
      ['amount', 'float', true],
      ['big', 'integer', true],
      ['day', 'date', true],
      ['ts', 'datetime', true],
      ['stamp', 'datetime', true],
      ['flag', 'boolean', true],
      ['data', 'unknown', true],
      ['kind', 'string', true],
    ]);
    expect(cols[1].db_type).toBe('varchar(50)');
    await expect(c.listColumns('test', 'no_such_table')).rejects.toMatchObject({ kind: 'query' });
  });

  it('normalises values the common way', async () => {
    const r = await c.query(
      `SELECT id, name, amount, big, day, ts, stamp, flag, data, kind FROM test.${table} ORDER BY id`,
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
      'boolean',
      'unknown',
      'string',
    ]);
    expect(r.rows).toEqual([
      [
        1,
        'один',
        12.5,
        '18446744073709551615',
        '2024-01-02',
        '2024-01-02T10:11:12.5',
        '2024-01-02T10:00:00',
        true,
        '\\xff00',
        'a',
      ],
      [2, 'two', null, 42, null, null, null, false, null, null],
    ]);
  });

  it('binds ? parameters', async () => {
    const r = await c.query(`SELECT name FROM test.${table} WHERE id = ? AND name <> ?`, [1, 'x']);
    expect(r.rows).toEqual([['один']]);
  });

  it('applies the row limit, says the result was truncated, and leaves the session clean', async () => {
    const r = await c.query('SELECT seq FROM seq_1_to_1000', [], { limit: 10 });
    expect(r.rows).toHaveLength(10);
    expect(r.truncated).toBe(true);
    const all = await c.query('SELECT seq FROM seq_1_to_1000', []);
    expect(all.rows).toHaveLength(1000);
  });

  it('runs statements that return no rows', async () => {
    expect(await c.query(`UPDATE test.${table} SET name = name WHERE id = 0`, [])).toEqual({
      columns: [],
      rows: [],
      truncated: false,
    });
    const shown = await c.query(`SHOW TABLES LIKE '${table}'`, []);
    expect(shown.rows).toEqual([[table]]);
  });

  it('streams rows without reading the whole result first', async () => {
    const started = Date.now();
    const seen: unknown[][] = [];
    for await (const row of c.stream('SELECT seq FROM seq_1_to_1000000000', [])) {
      seen.push(row);
      if (seen.length === 5) break;
    }
    expect(seen).toEqual([[1], [2], [3], [4], [5]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    let n = 0;
    for await (const _ of c.stream('SELECT seq FROM seq_1_to_50000', [])) n++;
    expect(n).toBe(50_000);
    expect((await c.query('SELECT 1', [])).rows).toEqual([[1]]);
  });

  it('cancels a query on timeout and on abort, and stays usable', async () => {
    let started = Date.now();
    await expect(c.query('SELECT SLEEP(10)', [], { timeoutMs: 300 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    started = Date.now();
    await expect(c.query('SELECT SLEEP(10)', [], { signal: ac.signal })).rejects.toMatchObject({ kind: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(3_000);
    const busy = await c.query(
      `SELECT count(*) FROM information_schema.processlist WHERE info = 'SELECT SLEEP(10)'`,
      [],
    );
    expect(busy.rows).toEqual([[0]]);
    expect((await c.query('SELECT 1', [])).rows).toEqual([[1]]);
  });

  it('reports query errors with the server text', async () => {
    const err = await c.query('SELECT no_such_column', []).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err).toMatchObject({ kind: 'query', message: expect.stringContaining('no_such_column') });
  });

  it('runs initial_sql on every new connection, statement by statement', async () => {
    const s = createConnector(
      'mysql',
      mysqlSettings({ initial_sql: "SET @a = 'x;y'; SET SESSION sql_mode = 'ANSI_QUOTES'" }),
    );
    try {
      const r = await s.query('SELECT @a, @@SESSION.sql_mode', []);
      expect(r.rows).toEqual([['x;y', 'ANSI_QUOTES']]);
    } finally {
      await s.close();
    }
    const broken = createConnector('mysql', mysqlSettings({ initial_sql: 'SELEC 1' }));
    await expect(broken.check()).rejects.toMatchObject({
      kind: 'settings',
      message: expect.stringContaining('initial_sql'),
    });
    await broken.close();
  });

  it('fails with the driver text on a wrong password', async () => {
    const s = createConnector('mysql', mysqlSettings({ password: 'wrong-password' }));
    await expect(s.check()).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('Access denied') });
    await s.close();
  });

  it('fails fast when the server cannot be reached', async () => {
    const refused = createConnector('mysql', mysqlSettings({ port: await closedPort() }));
    await expect(refused.check()).rejects.toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(/^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/),
    });
    await refused.close();

    const silent = await silentServer();
    const hung = createConnector('mysql', mysqlSettings({ port: silent.port }), { connectTimeoutMs: 1000 });
    const started = Date.now();
    await expect(hung.check()).rejects.toMatchObject({ kind: 'connection' });
    expect(Date.now() - started).toBeLessThan(4_000);
    await hung.close();
    await silent.close();
  });

  it('passes SSL settings to the driver', async () => {
    const have = await c.query(`SHOW VARIABLES LIKE 'have_ssl'`, []);
    const s = createConnector('mysql', mysqlSettings({ ssl: { enabled: true, reject_unauthorized: false } }));
    if (have.rows[0]?.[1] === 'YES') {
      await expect(s.check()).resolves.toBeUndefined();
    } else {
      // mysql2's words: "Server does not support secure connection"
      await expect(s.check()).rejects.toMatchObject({
        kind: 'connection',
        message: expect.stringMatching(/^Ошибка TLS при подключении к /),
      });
    }
    await s.close();
  });
});
