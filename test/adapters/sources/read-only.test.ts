// QueryOptions.readOnly against the real servers: a write is refused with the server's words (kind 'query') and
// changes nothing, reads (limits, streams, cancel) work as before, and the pooled connection goes back clean.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, importFile, type Connector, type QueryOptions } from '../../../adapters/sources';
import { connectorFailure } from './connector-failure';
import { clickhouseSettings, mysqlSettings, pgSettings, randomName } from './servers';

const RO: QueryOptions = { readOnly: true };

/** Every way in: query, stream and openStream. */
const viaAllPaths = (c: Connector, sql: string, params: unknown[] = []) => [
  () => c.query(sql, params, RO),
  async () => {
    for await (const _ of c.stream(sql, params, RO)) {
      /* read it all */
    }
  },
  async () => {
    const s = await c.openStream(sql, params, RO);
    try {
      for await (const _ of s) {
        /* read it all */
      }
    } finally {
      await s.close();
    }
  },
];

describe('read-only queries on PostgreSQL', () => {
  let c: Connector;
  const table = randomName();
  const seq = randomName('s');

  beforeAll(async () => {
    // One connection: whatever a read-only query leaves behind would meet the next query.
    c = createConnector('postgresql', pgSettings(), { poolSize: 1 });
    await c.query(`CREATE TABLE public.${table} (id int PRIMARY KEY, name text)`, []);
    await c.query(`INSERT INTO public.${table} VALUES (1, 'a'), (2, 'b')`, []);
    await c.query(`CREATE SEQUENCE public.${seq}`, []);
  });

  afterAll(async () => {
    await c.query(`DROP TABLE IF EXISTS public.${table}`, []);
    await c.query(`DROP SEQUENCE IF EXISTS public.${seq}`, []);
    await c.close();
  });

  const rows = async () => (await c.query(`SELECT id, name FROM public.${table} ORDER BY id`, [])).rows;
  const sequenceState = async () => (await c.query(`SELECT last_value, is_called FROM public.${seq}`, [])).rows;

  it('refuses writes with the server message and changes nothing', async () => {
    for (const sql of [
      `INSERT INTO public.${table} VALUES (3, 'c')`,
      `UPDATE public.${table} SET name = 'x'`,
      `WITH d AS (DELETE FROM public.${table} RETURNING id) SELECT * FROM d`,
      `CREATE TABLE public.${table}_new (a int)`,
      `DROP TABLE public.${table}`,
    ]) {
      for (const run of viaAllPaths(c, sql)) {
        const err = await connectorFailure(run);
        expect(err, sql).toMatchObject({
          kind: 'query',
          code: '25006',
          message: expect.stringContaining('read-only transaction'),
        });
      }
    }
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('does not advance a sequence read through SELECT', async () => {
    const before = await sequenceState();
    for (const run of viaAllPaths(c, `SELECT nextval('public.${seq}') AS n`)) {
      expect(await connectorFailure(run)).toMatchObject({
        kind: 'query',
        message: expect.stringContaining('nextval()'),
      });
    }
    expect(await sequenceState()).toEqual(before);
  });

  it('rolls back what a read-only transaction still allows (large objects, settings)', async () => {
    const made = await c.query(`SELECT lo_from_bytea(0, '\\x01'::bytea)::bigint AS oid`, [], RO);
    const oid = made.rows[0][0];
    expect(
      (await c.query('SELECT count(*)::int FROM pg_largeobject_metadata WHERE oid = $1::oid', [oid])).rows,
    ).toEqual([[0]]);
    const path = (await c.query('SHOW search_path', [])).rows;
    await c.query('SET search_path = pg_catalog', [], RO);
    expect((await c.query('SHOW search_path', [])).rows).toEqual(path);
  });

  it('keeps every guarantee for a bounded read (a row limit), which runs as one plain statement', async () => {
    const LIM: QueryOptions = { ...RO, limit: 5 };
    for (const sql of [
      `WITH d AS (DELETE FROM public.${table} RETURNING id) SELECT * FROM d`,
      `SELECT nextval('public.${seq}') AS n`,
    ]) {
      expect(await connectorFailure(() => c.query(sql, [], LIM)), sql).toMatchObject({ kind: 'query' });
    }
    const made = await c.query(`SELECT lo_from_bytea(0, '\\x02'::bytea)::bigint AS oid`, [], LIM);
    expect(
      (await c.query('SELECT count(*)::int FROM pg_largeobject_metadata WHERE oid = $1::oid', [made.rows[0][0]])).rows,
    ).toEqual([[0]]);
    const path = (await c.query('SHOW search_path', [])).rows;
    await c.query(`SELECT set_config('search_path', 'pg_catalog', false)`, [], LIM);
    await c.query(`SELECT set_config('default_transaction_read_only', 'on', false)`, [], LIM);
    expect((await c.query('SHOW search_path', [])).rows).toEqual(path);
    expect((await c.query('SHOW default_transaction_read_only', [])).rows).toEqual([['off']]);
    expect(
      await connectorFailure(() => c.query(`SELECT 1; COMMIT; DELETE FROM public.${table}`, [], LIM)),
    ).toMatchObject({
      message: expect.stringContaining('multiple commands'),
    });
    // A statement without a LIMIT of its own still reads no more than the limit (plus the one that tells truncation).
    const big = await c.query('SELECT g, g * 2 AS g FROM generate_series(1, 100000) g ORDER BY 1 DESC', [], LIM);
    expect(big).toMatchObject({
      truncated: true,
      rows: [
        [100000, 200000],
        [99999, 199998],
        [99998, 199996],
        [99997, 199994],
        [99996, 199992],
      ],
    });
    await expect(c.query('SELECT pg_sleep(10)', [], { ...LIM, timeoutMs: 300 })).rejects.toMatchObject({
      kind: 'timeout',
    });
    expect((await c.query('SELECT $1::int + 1 AS n -- a trailing comment', [41], LIM)).rows).toEqual([[42]]);
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('takes one statement only: nothing runs after a COMMIT, however the text is quoted', async () => {
    for (const sql of [
      `SELECT 1; COMMIT; DELETE FROM public.${table}`,
      // A backslash does not escape a quote in a standard string: this is three statements to the server.
      `SELECT '\\'; COMMIT; DELETE FROM public.${table}; SELECT '\\'`,
    ]) {
      for (const run of viaAllPaths(c, sql)) {
        expect(await connectorFailure(run), sql).toMatchObject({
          kind: 'query',
          message: expect.stringContaining('multiple commands'),
        });
      }
    }
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('refuses COPY and DO, which a read-only transaction lets write files or run programs', async () => {
    for (const sql of [
      `COPY (SELECT 1) TO PROGRAM 'true'`,
      `COPY public.${table} TO '/tmp/${table}.csv'`,
      'DO $$ BEGIN PERFORM 1; END $$',
    ]) {
      expect(await connectorFailure(() => c.query(sql, [], RO)), sql).toMatchObject({
        kind: 'query',
        message: expect.stringMatching(/^Запрос (COPY|DO) не выполняется/),
      });
    }
  });

  it('reads as before: params, limits, SHOW, cursor streams', async () => {
    expect((await c.query(`SELECT name FROM public.${table} WHERE id = $1`, [2], RO)).rows).toEqual([['b']]);
    const limited = await c.query('SELECT g FROM generate_series(1, 1000) g', [], { ...RO, limit: 10 });
    expect(limited).toMatchObject({ truncated: true });
    expect(limited.rows).toHaveLength(10);
    expect((await c.query('SHOW server_version', [], RO)).rows[0][0]).toMatch(/^\d+/);
    const started = Date.now();
    const seen: unknown[][] = [];
    for await (const row of c.stream('SELECT generate_series(1, 1000000000)', [], RO)) {
      seen.push(row);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([[1], [2], [3]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    let n = 0;
    for await (const _ of c.stream('SELECT generate_series(1, 5000)', [], RO)) n++;
    expect(n).toBe(5000);
    const s = await c.openStream(`SELECT id FROM public.${table} ORDER BY id`, [], RO);
    expect(s.columns).toEqual([{ name: 'id', db_type: 'integer', primitive_type: 'integer' }]);
    await s.close();
  });

  it('cancels on timeout and abort, and the connection then writes again', async () => {
    await expect(c.query('SELECT pg_sleep(10)', [], { ...RO, timeoutMs: 300 })).rejects.toMatchObject({
      kind: 'timeout',
    });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    await expect(c.query('SELECT pg_sleep(10)', [], { ...RO, signal: ac.signal })).rejects.toMatchObject({
      kind: 'cancelled',
    });
    // Neither a read-only transaction nor its setting is left behind on the pooled connection.
    await c.query(`INSERT INTO public.${table} VALUES (3, 'c')`, []);
    await c.query(`DELETE FROM public.${table} WHERE id = 3`, []);
    expect((await c.query('SHOW transaction_read_only', [])).rows).toEqual([['off']]);
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });
});

describe('read-only queries on MariaDB', () => {
  let c: Connector;
  const table = randomName();
  const fn = randomName('f');

  beforeAll(async () => {
    c = createConnector('mysql', mysqlSettings(), { poolSize: 1 });
    await c.query(`CREATE TABLE test.${table} (id int PRIMARY KEY, name varchar(20))`, []);
    await c.query(`INSERT INTO test.${table} VALUES (1, 'a'), (2, 'b')`, []);
    await c.query(
      `CREATE FUNCTION test.${fn}() RETURNS int MODIFIES SQL DATA BEGIN INSERT INTO test.${table} VALUES (99, 'f'); RETURN 1; END`,
      [],
    );
  });

  afterAll(async () => {
    await c.query(`DROP FUNCTION IF EXISTS test.${fn}`, []);
    await c.query(`DROP TABLE IF EXISTS test.${table}`, []);
    await c.query(`DROP TABLE IF EXISTS test.${table}_new`, []);
    await c.close();
  });

  const rows = async () => (await c.query(`SELECT id, name FROM test.${table} ORDER BY id`, [])).rows;

  it('refuses writes, DDL included, with the server message and changes nothing', async () => {
    for (const sql of [
      `INSERT INTO test.${table} VALUES (3, 'c')`,
      `SELECT test.${fn}() AS n`,
      `CREATE TABLE test.${table}_new (a int)`,
      `DROP TABLE test.${table}`,
      `TRUNCATE TABLE test.${table}`,
    ]) {
      for (const run of viaAllPaths(c, sql)) {
        expect(await connectorFailure(run), sql).toMatchObject({
          kind: 'query',
          code: '1792',
          message: expect.stringContaining('READ ONLY transaction'),
        });
      }
    }
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect((await c.listTables('test')).map((t) => t.name)).not.toContain(`${table}_new`);
  });

  it('refuses file writes and dynamic SQL, which a read-only transaction lets through', async () => {
    const file = `/tmp/${randomName('out')}`;
    for (const sql of [
      `SELECT id FROM test.${table} INTO OUTFILE '${file}'`,
      `SELECT id FROM test.${table} LIMIT 1 INTO DUMPFILE '${file}'`,
      `SELECT 1 /*!INTO OUTFILE '${file}' */`,
      `EXECUTE IMMEDIATE CONCAT('SELECT 1 INTO OUT', 'FILE ''${file}''')`,
      `PREPARE s FROM 'SELECT 1'`,
    ]) {
      expect(await connectorFailure(() => c.query(sql, [], RO)), sql).toMatchObject({
        kind: 'query',
        message: expect.stringMatching(/не выполняется в режиме только для чтения$/),
      });
    }
  });

  it('reads as before: params, limits, streams', async () => {
    expect((await c.query(`SELECT name FROM test.${table} WHERE id = ?`, [2], RO)).rows).toEqual([['b']]);
    const limited = await c.query('SELECT seq FROM seq_1_to_1000', [], { ...RO, limit: 10 });
    expect(limited.rows).toHaveLength(10);
    expect(limited.truncated).toBe(true);
    let n = 0;
    for await (const _ of c.stream('SELECT seq FROM seq_1_to_5000', [], RO)) n++;
    expect(n).toBe(5000);
    const seen: unknown[][] = [];
    for await (const row of c.stream('SELECT seq FROM seq_1_to_100000', [], RO)) {
      seen.push(row);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual([[1], [2]]);
    expect((await c.query('SHOW TABLES', [], RO)).rows.map((r) => r[0])).toContain(table);
  });

  it('cancels with KILL QUERY, and the connection goes back read-write with no transaction open', async () => {
    await expect(c.query('SELECT SLEEP(10)', [], { ...RO, timeoutMs: 300 })).rejects.toMatchObject({ kind: 'timeout' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    await expect(c.query('SELECT SLEEP(10)', [], { ...RO, signal: ac.signal })).rejects.toMatchObject({
      kind: 'cancelled',
    });
    await c.query(`SELECT name FROM test.${table}`, [], RO);
    expect((await c.query('SELECT @@in_transaction, @@session.tx_read_only', [])).rows).toEqual([[0, 0]]);
    await c.query(`INSERT INTO test.${table} VALUES (3, 'c')`, []);
    // Committed: another connection sees it.
    const other = createConnector('mysql', mysqlSettings());
    try {
      expect((await other.query(`SELECT name FROM test.${table} WHERE id = 3`, [])).rows).toEqual([['c']]);
    } finally {
      await other.close();
    }
    await c.query(`DELETE FROM test.${table} WHERE id = 3`, []);
  });

  it("a widget read (the compiler's text) on a connection left so is three statements; any other text five", async () => {
    // The session's own statement counter, read inside a read as a widget read leaves the session (one connection).
    const WIDGET: QueryOptions = { ...RO, limit: 101, compiledText: true };
    const questions = async () =>
      Number((await c.query(`SHOW SESSION STATUS LIKE 'Questions'`, [], WIDGET)).rows[0][1]);
    const perRead = async (opts: QueryOptions) => {
      await questions(); // leaves the session as `opts` will find it after the first read below
      await c.query(`SELECT name FROM test.${table} WHERE id = ?`, [1], opts);
      const before = await questions();
      for (let i = 0; i < 5; i++) await c.query(`SELECT name FROM test.${table} WHERE id = ?`, [1], opts);
      const after = await questions();
      const alone = (await questions()) - after; // the counter read itself, with its START and ROLLBACK
      return (after - before - alone) / 5;
    };
    // START TRANSACTION READ ONLY, the SELECT, ROLLBACK.
    expect(await perRead(WIDGET)).toBe(3);
    // And the session's mode and limit set again before it (a user's text may have changed them).
    expect(await perRead({ ...RO, limit: 101 })).toBe(5);
  });

  it("a session a user's read-only text changed is set again before the next read: no write and no short catalog", async () => {
    // The compiler's text first, so the session is known read-only with a row limit...
    await c.query(`SELECT name FROM test.${table} WHERE id = ?`, [1], { ...RO, limit: 2, compiledText: true });
    // ...then a user's text in read-only mode changes the session's mode and limit.
    await c.query('SET SESSION TRANSACTION READ WRITE', [], RO);
    await c.query('SET SESSION sql_select_limit = 1', [], RO);
    for (const sql of [`CREATE TABLE test.${table}_new (a int)`, `INSERT INTO test.${table} VALUES (5, 'e')`]) {
      expect(await connectorFailure(() => c.query(sql, [], RO)), sql).toMatchObject({ kind: 'query', code: '1792' });
    }
    expect((await c.listTables('test')).map((t) => t.name)).not.toContain(`${table}_new`);
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    await c.query('SET SESSION sql_select_limit = 1', [], RO);
    expect((await c.query('SELECT seq FROM seq_1_to_1000', [])).rows).toHaveLength(1000);
    expect((await c.listTables('test')).map((t) => t.name)).toContain(table);
    // A write (not read-only) after widget reads: the session read-write again, no transaction open.
    await c.query(`SELECT name FROM test.${table} WHERE id = ?`, [1], { ...RO, limit: 2, compiledText: true });
    expect((await c.query('SELECT @@in_transaction, @@session.tx_read_only', [])).rows).toEqual([[0, 0]]);
  });

  it('leaves a session that initial_sql made read-only as it was', async () => {
    const ro = createConnector('mysql', mysqlSettings({ initial_sql: 'SET SESSION TRANSACTION READ ONLY' }), {
      poolSize: 1,
    });
    try {
      expect((await ro.query(`SELECT name FROM test.${table} WHERE id = 1`, [], RO)).rows).toEqual([['a']]);
      expect(await connectorFailure(() => ro.query(`INSERT INTO test.${table} VALUES (4, 'd')`, []))).toMatchObject({
        kind: 'query',
        code: '1792',
      });
    } finally {
      await ro.close();
    }
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });
});

describe('read-only queries on ClickHouse', () => {
  let c: Connector;
  const table = randomName();

  beforeAll(async () => {
    c = createConnector('clickhouse', clickhouseSettings());
    await c.query(`CREATE TABLE default.${table} (id Int32, name String) ENGINE = MergeTree ORDER BY id`, []);
    await c.query(`INSERT INTO default.${table} VALUES (1, 'a'), (2, 'b')`, []);
  });

  afterAll(async () => {
    await c.query(`DROP TABLE IF EXISTS default.${table}`, []);
    await c.query(`DROP TABLE IF EXISTS default.${table}_new`, []);
    await c.close();
  });

  const rows = async () => (await c.query(`SELECT id, name FROM default.${table} ORDER BY id`, [])).rows;

  it('refuses writes with the server message and changes nothing', async () => {
    for (const sql of [
      `INSERT INTO default.${table} VALUES (3, 'c')`,
      `CREATE TABLE default.${table}_new (a UInt8) ENGINE = Memory`,
      `DROP TABLE default.${table}`,
      `TRUNCATE TABLE default.${table}`,
      `ALTER TABLE default.${table} DELETE WHERE 1`,
    ]) {
      for (const run of viaAllPaths(c, sql)) {
        expect(await connectorFailure(run), sql).toMatchObject({
          kind: 'query',
          code: '164',
          message: expect.stringContaining('readonly mode'),
        });
      }
    }
    expect(await rows()).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('keeps the request settings and SETTINGS clauses working (readonly = 2), and a stricter readonly from initial_sql', async () => {
    const limited = await c.query('SELECT number FROM system.numbers', [], { ...RO, limit: 5, timeoutMs: 10_000 });
    expect(limited.rows).toHaveLength(5);
    expect(limited.truncated).toBe(true);
    const settings = `SELECT name, value FROM system.settings WHERE name IN ('readonly', 'max_execution_time') ORDER BY name`;
    expect((await c.query(settings, [], { ...RO, timeoutMs: 7_000 })).rows).toEqual([
      ['max_execution_time', '7'],
      ['readonly', '2'],
    ]);
    expect((await c.query(`SELECT count() FROM default.${table} SETTINGS join_use_nulls = 1`, [], RO)).rows).toEqual([
      [2],
    ]);
    let n = 0;
    for await (const _ of c.stream('SELECT number FROM system.numbers LIMIT 5000', [], RO)) n++;
    expect(n).toBe(5000);

    const strict = createConnector('clickhouse', clickhouseSettings({ initial_sql: 'SET readonly = 1' }));
    try {
      expect((await strict.query(`SELECT value FROM system.settings WHERE name = 'readonly'`, [], RO)).rows).toEqual([
        ['1'],
      ]);
    } finally {
      await strict.close();
    }
  });

  it('cancels on timeout as before', async () => {
    await expect(c.query('SELECT sleep(3)', [], { ...RO, timeoutMs: 300 })).rejects.toMatchObject({
      kind: expect.stringMatching(/^(timeout|cancelled)$/),
    });
    expect((await c.query('SELECT 1', [], RO)).rows).toEqual([[1]]);
  });
});

describe('read-only queries on a file source (DuckDB, always read-only)', () => {
  let dir: string;
  let c: Connector;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'read-only-test-'));
    await writeFile(join(dir, 'q.csv'), 'id,name\n1,a\n2,b\n');
    const r = await importFile({
      input_path: join(dir, 'q.csv'),
      format: 'csv',
      duckdb_path: join(dir, 'q.duckdb'),
      table_name: 'items',
    });
    c = createConnector('file', { file: { duckdb_path: join(dir, 'q.duckdb'), tables: r.tables } });
  });

  afterAll(async () => {
    await c.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses writes whether or not readOnly is asked, and reads', async () => {
    for (const opts of [RO, {}]) {
      for (const sql of ["INSERT INTO items VALUES (3, 'c')", 'CREATE TABLE t2 AS SELECT 1 AS a', 'DROP TABLE items']) {
        expect(await connectorFailure(() => c.query(sql, [], opts)), sql).toMatchObject({
          kind: 'query',
          message: expect.stringMatching(/read-only/i),
        });
      }
    }
    expect((await c.query('SELECT id, name FROM items ORDER BY id', [], RO)).rows).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });
});
