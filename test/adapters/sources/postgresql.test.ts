import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, createConnector, type Connector } from '../../../adapters/sources';
import { closedPort, pgSettings, randomName, silentServer } from './servers';

describe('postgresql connector', () => {
  let c: Connector;
  const table = randomName();

  beforeAll(async () => {
    c = createConnector('postgresql', pgSettings());
    await c.query(
      `CREATE TABLE public.${table} (id int PRIMARY KEY, name text NOT NULL, amount numeric(10,2), big bigint,
         day date, ts timestamp(3), tstz timestamptz, flag boolean, tags text[])`,
      [],
    );
    await c.query(
      `INSERT INTO public.${table} VALUES
        (1, 'один', 12.50, 9007199254740993, '2024-01-02', '2024-01-02 10:11:12.5', '2024-01-02 10:00:00+03', true, '{a,b}'),
        (2, 'two', NULL, 42, NULL, NULL, NULL, false, NULL)`,
      [],
    );
    await c.query(`CREATE VIEW public.${table}_v AS SELECT id FROM public.${table}`, []);
  });

  afterAll(async () => {
    await c.query(`DROP VIEW IF EXISTS public.${table}_v`, []);
    await c.query(`DROP TABLE IF EXISTS public.${table}`, []);
    await c.close();
  });

  it('checks the connection', async () => {
    await expect(c.check()).resolves.toBeUndefined();
  });

  it('lists schemas, tables with views, and columns with types', async () => {
    expect(await c.listSchemas()).toContain('public');
    expect(await c.listSchemas()).not.toContain('pg_catalog');
    const tables = await c.listTables('public');
    expect(tables).toContainEqual({ schema: 'public', name: table, kind: 'table' });
    expect(tables).toContainEqual({ schema: 'public', name: `${table}_v`, kind: 'view' });
    const cols = await c.listColumns('public', table);
    expect(cols.map((x) => [x.name, x.db_type, x.primitive_type, x.nullable])).toEqual([
      ['id', 'integer', 'integer', false],
      ['name', 'text', 'string', false],
      ['amount', 'numeric(10,2)', 'float', true],
      ['big', 'bigint', 'integer', true],
      ['day', 'date', 'date', true],
      ['ts', 'timestamp(3) without time zone', 'datetime', true],
      ['tstz', 'timestamp with time zone', 'datetime', true],
      ['flag', 'boolean', 'boolean', true],
      ['tags', 'text[]', 'unknown', true],
    ]);
    await expect(c.listColumns('public', 'no_such_table')).rejects.toMatchObject({ kind: 'query' });
  });

  it('normalises values the common way', async () => {
    const r = await c.query(
      `SELECT id, name, amount, big, day, ts, tstz, flag, tags FROM public.${table} ORDER BY id`,
      [],
    );
    expect(r.truncated).toBe(false);
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
    ]);
    expect(r.rows).toEqual([
      [
        1,
        'один',
        12.5,
        '9007199254740993',
        '2024-01-02',
        '2024-01-02T10:11:12.5',
        '2024-01-02T07:00:00',
        true,
        '{a,b}',
      ],
      [2, 'two', null, 42, null, null, null, false, null],
    ]);
  });

  it('binds $n parameters', async () => {
    const r = await c.query(`SELECT name FROM public.${table} WHERE id = $1 AND name <> $2`, [1, 'x']);
    expect(r.rows).toEqual([['один']]);
  });

  it('applies the row limit and says the result was truncated', async () => {
    const r = await c.query('SELECT g FROM generate_series(1, 1000) g', [], { limit: 10 });
    expect(r.rows).toHaveLength(10);
    expect(r.truncated).toBe(true);
    const exact = await c.query('SELECT g FROM generate_series(1, 10) g', [], { limit: 10 });
    expect(exact.truncated).toBe(false);
  });

  it('runs statements that return no rows, and non-SELECT statements with rows', async () => {
    const t = randomName();
    const created = await c.query(`CREATE TEMP TABLE ${t} (a int)`, []);
    expect(created).toEqual({ columns: [], rows: [], truncated: false });
    const shown = await c.query('SHOW server_version', []);
    expect(shown.rows[0][0]).toMatch(/^\d+/);
    const ins = await c.query(`INSERT INTO public.${table} (id, name) VALUES (3, 'x') RETURNING id`, []);
    expect(ins.rows).toEqual([[3]]);
    await c.query(`DELETE FROM public.${table} WHERE id = 3`, []);
  });

  it('streams rows without reading the whole result first', async () => {
    const started = Date.now();
    const seen: unknown[][] = [];
    // Unbounded for practical purposes: only a cursor makes this return quickly.
    for await (const row of c.stream('SELECT generate_series(1, 1000000000)', [])) {
      seen.push(row);
      if (seen.length === 5) break;
    }
    expect(seen).toEqual([[1], [2], [3], [4], [5]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    let n = 0;
    for await (const _ of c.stream('SELECT generate_series(1, 50000)', [])) n++;
    expect(n).toBe(50_000);
    const s = await c.openStream('SELECT 1::int AS one', []);
    expect(s.columns).toEqual([{ name: 'one', db_type: 'integer', primitive_type: 'integer' }]);
    await s.close();
  });

  it('stops a query over its budget on the server even when the cancel cannot reach it', async () => {
    // The cancel goes over a separate connection, which a full server (max_connections) refuses: stand in for that.
    const lonely = createConnector('postgresql', pgSettings());
    (lonely as unknown as { cancelBackend: () => Promise<void> }).cancelBackend = async () => {};
    try {
      for (const opts of [{ limit: 10 }, {}]) {
        const started = Date.now();
        await expect(
          lonely.query('SELECT pg_sleep(20)', [], { timeoutMs: 300, readOnly: true, ...opts }),
        ).rejects.toMatchObject({ kind: 'timeout' });
        expect(Date.now() - started).toBeLessThan(5_000);
      }
    } finally {
      await lonely.close();
    }
  });

  it('cancels a query on timeout and on abort, and stays usable', async () => {
    let started = Date.now();
    await expect(c.query('SELECT pg_sleep(10)', [], { timeoutMs: 300 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    started = Date.now();
    await expect(c.query('SELECT pg_sleep(10)', [], { signal: ac.signal })).rejects.toMatchObject({
      kind: 'cancelled',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    // The backend really stopped: nothing of ours is still sleeping.
    const busy = await c.query(
      `SELECT count(*)::int FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(10)' AND state = 'active'`,
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

  it('runs initial_sql on every new connection', async () => {
    const s = createConnector(
      'postgresql',
      pgSettings({ initial_sql: "SET application_name = 'from_initial_sql'; SET search_path = pg_catalog" }),
    );
    try {
      const r = await s.query('SELECT current_setting($1), current_setting($2)', ['application_name', 'search_path']);
      expect(r.rows).toEqual([['from_initial_sql', 'pg_catalog']]);
    } finally {
      await s.close();
    }
    const broken = createConnector('postgresql', pgSettings({ initial_sql: 'SELEC 1' }));
    await expect(broken.check()).rejects.toMatchObject({
      kind: 'settings',
      message: expect.stringContaining('initial_sql'),
    });
    await broken.close();
  });

  it('fails with the driver text on a wrong user or password', async () => {
    const s = createConnector('postgresql', pgSettings({ username: 'no_such_user_x' }));
    await expect(s.check()).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('no_such_user_x') });
    await s.close();
  });

  it('fails fast when the server cannot be reached', async () => {
    const refused = createConnector('postgresql', pgSettings({ port: await closedPort() }));
    await expect(refused.check()).rejects.toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(/^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/),
    });
    await refused.close();

    const silent = await silentServer();
    const hung = createConnector('postgresql', pgSettings({ port: silent.port }), { connectTimeoutMs: 1000 });
    const started = Date.now();
    await expect(hung.check()).rejects.toMatchObject({ kind: 'connection' });
    expect(Date.now() - started).toBeLessThan(4_000);
    await hung.close();
    await silent.close();
  });

  it('passes SSL settings to the driver', async () => {
    const enabled = await c.query(`SELECT setting FROM pg_settings WHERE name = 'ssl'`, []);
    const s = createConnector('postgresql', pgSettings({ ssl: { enabled: true, reject_unauthorized: false } }));
    if (enabled.rows[0]?.[0] === 'on') {
      await expect(s.check()).resolves.toBeUndefined();
    } else {
      await expect(s.check()).rejects.toMatchObject({
        kind: 'connection',
        message: expect.stringMatching(/^Ошибка TLS при подключении к /),
      });
    }
    await s.close();
  });
});
