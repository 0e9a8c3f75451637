import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { createConnector } from '../../../adapters/sources';
import { dataSourceQueries } from '../../../db/schema/data-sources';
import { useTestApp } from '../../support/app';
import { failure } from '../../support/rest';
import { createRoleCast, type RoleCast } from '../../support/factories';
import {
  SERVERS,
  createCitiesTable,
  createSource,
  dropTable,
  ok,
  randomName,
  sleep,
  type AccessLogPage,
  type DbKind,
  type QueryPage,
  type QueryView,
  type SchemaList,
  type SourceView,
  type SqlCheck,
} from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;
const sources: Partial<Record<DbKind, number>> = {};
const tables: [DbKind, string][] = [];

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  for (const kind of ['postgresql', 'mysql', 'clickhouse'] as const) {
    sources[kind] = (await createSource(api, cast.tokens.editor, kind, { workspace_id: cast.workspaceId })).id;
  }
});
afterAll(async () => {
  await Promise.all(tables.map(([kind, name]) => dropTable(kind, name)));
});

const url = (kind: DbKind, tail = '') => `/api/data-source/${sources[kind]}/queries${tail}`;
const run = (kind: DbKind, body: Record<string, unknown>, token = cast.tokens.editor) =>
  api.post(url(kind), body, token);

async function waitFor(kind: DbKind, queryId: string, state: string, token = cast.tokens.editor, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const q = ok<QueryView>(await api.get(url(kind, `/${queryId}`), token));
    if (q.state === state || Date.now() > until) return q;
    await sleep(150);
  }
}

describe('SQL console on PostgreSQL', () => {
  it('answers a fast query inline, finished, first page of the stored result', async () => {
    const q = ok<QueryView>(
      await run('postgresql', { sql: 'SELECT n, n * 2 AS twice FROM generate_series(1, 250) AS n' }),
    );
    expect(q).toMatchObject({
      state: 'finished',
      row_count: 250,
      truncated: false,
      error: null,
      result_available: true,
    });
    expect(q.query_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(q.columns!.map((c) => [c.name, c.primitive_type])).toEqual([
      ['n', 'integer'],
      ['twice', 'integer'],
    ]);
    expect(q.rows).toHaveLength(100);
    expect(q.rows[0]).toEqual([1, 2]);
    expect(q.page).toEqual({ size: 100, number: 0, total_elements: 250, total_pages: 3 });
    const last = ok<QueryView>(
      await api.get(url('postgresql', `/${q.query_id}`), cast.tokens.editor, { page: '2', size: '100' }),
    );
    expect(last.rows).toHaveLength(50);
    expect(last.rows[49]).toEqual([250, 500]);
    expect(last.page).toEqual({ size: 100, number: 2, total_elements: 250, total_pages: 3 });
    expect(
      ok<QueryView>(await api.get(url('postgresql', `/${q.query_id}`), cast.tokens.editor, { page: '9', size: '100' }))
        .rows,
    ).toEqual([]);
  });

  it('binds positional parameters and keeps at most `limit` rows', async () => {
    expect(
      ok<QueryView>(
        await run('postgresql', { sql: 'SELECT $1::int + 1 AS x, $2::text AS t', parameters: [41, "it's"] }),
      ).rows,
    ).toEqual([[42, "it's"]]);
    const cut = ok<QueryView>(
      await run('postgresql', { sql: 'SELECT n FROM generate_series(1, 100) AS n', limit: 10 }),
    );
    expect(cut).toMatchObject({ row_count: 10, truncated: true });
  });

  it('runs statements without a result (DDL, DML)', async () => {
    const table = randomName('console');
    tables.push(['postgresql', table]);
    const created = ok<QueryView>(await run('postgresql', { sql: `CREATE TABLE ${table} (a int)` }));
    expect(created).toMatchObject({ state: 'finished', columns: [], rows: [], row_count: 0 });
    ok<QueryView>(await run('postgresql', { sql: `INSERT INTO ${table} VALUES (1), (2)` }));
    expect(ok<QueryView>(await run('postgresql', { sql: `SELECT count(*) AS n FROM ${table}` })).rows).toEqual([[2]]);
  });

  it('answers an SQL error with 400 and the driver message, and keeps it in the history', async () => {
    const res = await run('postgresql', { sql: 'SELEC 1' });
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/syntax error/);
    const history = ok<QueryPage>(await api.get(url('postgresql'), cast.tokens.editor, { size: '1' }));
    expect(history.content[0]).toMatchObject({
      sql: 'SELEC 1',
      state: 'failed',
      error: expect.stringMatching(/syntax error/),
    });
  });

  it('answers a slow query as running, then the poll gives the result', async () => {
    const q = ok<QueryView>(await run('postgresql', { sql: 'SELECT pg_sleep(2.5), 7 AS seven' }));
    expect(q).toMatchObject({ state: 'running', columns: null, rows: [], finished_at: null });
    const done = await waitFor('postgresql', q.query_id, 'finished');
    expect(done.state).toBe('finished');
    expect(done.rows).toEqual([['', 7]]);
    expect(done.duration_ms).toBeGreaterThanOrEqual(2000);
  });

  it('cancels a running query on the source server itself', async () => {
    const marker = randomName('cancel_me');
    const q = ok<QueryView>(await run('postgresql', { sql: `SELECT pg_sleep(60), '${marker}'` }));
    expect(q.state).toBe('running');
    const started = Date.now();
    const cancelled = ok<QueryView>(
      await api.post(url('postgresql', `/${q.query_id}/cancel`), undefined, cast.tokens.editor),
    );
    expect(cancelled).toMatchObject({ state: 'cancelled', error: 'Запрос отменён', cancel_requested: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    const pg = createConnector('postgresql', SERVERS.postgresql());
    try {
      const active = await pg.query(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1`, [
        `%${marker}%`,
      ]);
      expect(active.rows).toEqual([[0]]);
    } finally {
      await pg.close();
    }
    expect(
      ok<QueryView>(await api.post(url('postgresql', `/${q.query_id}/cancel`), undefined, cast.tokens.editor)).state,
    ).toBe('cancelled');
    const finished = ok<QueryView>(await run('postgresql', { sql: 'SELECT 1' }));
    const again = await api.post(url('postgresql', `/${finished.query_id}/cancel`), undefined, cast.tokens.editor);
    expect(again.status).toBe(400);
  });

  it('cancels from another node: the running node sees the flag at its next heartbeat', async () => {
    const q = ok<QueryView>(await run('postgresql', { sql: 'SELECT pg_sleep(60)' }));
    // What a cancel landing on another API node does: only the shared database row changes.
    await t.deps.db
      .update(dataSourceQueries)
      .set({ cancelRequested: true })
      .where(eq(dataSourceQueries.id, q.query_id));
    const done = await waitFor('postgresql', q.query_id, 'cancelled', cast.tokens.editor, 5_000);
    expect(done.state).toBe('cancelled');
  });

  it('reports a query whose node stopped beating as failed', async () => {
    const [row] = await t.deps.db
      .insert(dataSourceQueries)
      .values({
        dataSourceId: sources.postgresql!,
        userId: cast.users.editor.id,
        sql: 'SELECT 1',
        state: 'running',
        heartbeatAt: sql`now() - interval '1 minute'`,
      })
      .returning();
    const q = ok<QueryView>(await api.get(url('postgresql', `/${row.id}`), cast.tokens.editor));
    expect(q).toMatchObject({ state: 'failed', error: expect.stringMatching(/узел/) });
  });

  it('validates SQL without running it', async () => {
    const table = randomName('validate');
    tables.push(['postgresql', table]);
    await createCitiesTable('postgresql', table);
    const v = async (s: string, parameters?: unknown[]) =>
      ok<SqlCheck>(
        await api.post(
          `/api/data-source/${sources.postgresql}/sql/validate`,
          { sql: s, parameters },
          cast.tokens.editor,
        ),
      );
    const good = await v(`SELECT id, city AS "Город" FROM ${table} -- trailing comment`);
    expect(good).toMatchObject({ valid: true, checked: true, message: 'Запрос корректен' });
    expect(good.columns!.map((c) => c.name)).toEqual(['id', 'Город']);
    expect(await v('SELECT $1::int AS x', [1])).toMatchObject({ valid: true, columns: [{ name: 'x' }] });
    expect(await v('SELEC 1')).toMatchObject({
      valid: false,
      checked: true,
      message: expect.stringMatching(/неизвестная команда «SELEC»/),
    });
    expect(await v('SELECT 1 FROM')).toMatchObject({
      valid: false,
      checked: true,
      message: expect.stringMatching(/syntax error/),
    });
    expect(await v('SELECT nope FROM no_such_table_q')).toMatchObject({
      valid: false,
      message: expect.stringContaining('no_such_table_q'),
    });
    expect(await v('SELECT 1; DROP TABLE x')).toMatchObject({
      valid: false,
      message: expect.stringMatching(/одна команда/),
    });
    expect(await v(`CREATE TABLE ${table}_2 (a int)`)).toMatchObject({ valid: true, checked: false });
    // a data change is planned, not executed
    expect(await v(`DELETE FROM ${table} WHERE id > 0`)).toMatchObject({ valid: true, checked: true, columns: null });
    expect(ok<QueryView>(await run('postgresql', { sql: `SELECT count(*) FROM ${table}` })).rows).toEqual([[3]]);
    // no side effects from a wrapped query either
    expect((await v('SELECT pg_sleep(30)')).valid).toBe(true);
  });
});

describe('SQL console on MariaDB and ClickHouse', () => {
  it('runs, fails and cancels on MariaDB', async () => {
    expect(ok<QueryView>(await run('mysql', { sql: 'SELECT ? + 1 AS x', parameters: [1] })).rows).toEqual([[2]]);
    const bad = await run('mysql', { sql: 'SELECT * FROM no_such_table_m' });
    expect(bad.status).toBe(400);
    expect(failure(bad).message).toMatch(/doesn't exist/);
    const q = ok<QueryView>(await run('mysql', { sql: 'SELECT SLEEP(60)' }));
    expect(q.state).toBe('running');
    const cancelled = ok<QueryView>(
      await api.post(url('mysql', `/${q.query_id}/cancel`), undefined, cast.tokens.editor),
    );
    expect(cancelled.state).toBe('cancelled');
  });

  it('validates on MariaDB: a query with its columns, a data change by EXPLAIN, repeated column names', async () => {
    const v = async (s: string) =>
      ok<SqlCheck>(await api.post(`/api/data-source/${sources.mysql}/sql/validate`, { sql: s }, cast.tokens.editor));
    expect((await v('SELECT 1 AS a, 2 AS b')).columns!.map((c) => c.name)).toEqual(['a', 'b']);
    expect(await v('SELECT 1 AS a, 2 AS a')).toMatchObject({ valid: true, columns: null });
    expect(await v('SELECT 1 FROM WHERE')).toMatchObject({
      valid: false,
      message: expect.stringMatching(/SQL syntax/),
    });
    const table = randomName('mv');
    tables.push(['mysql', table]);
    await createCitiesTable('mysql', table);
    expect(await v(`DELETE FROM test.${table}`)).toMatchObject({ valid: true, checked: true });
    expect(ok<QueryView>(await run('mysql', { sql: `SELECT count(*) FROM test.${table}` })).rows).toEqual([[3]]);
  });

  it('runs and validates on ClickHouse, which takes no parameters', async () => {
    const q = ok<QueryView>(
      await run('clickhouse', { sql: 'SELECT number, toString(number) AS s FROM system.numbers LIMIT 3' }),
    );
    expect(q.rows).toEqual([
      [0, '0'],
      [1, '1'],
      [2, '2'],
    ]);
    const params = await run('clickhouse', { sql: 'SELECT 1', parameters: [1] });
    expect(params.status).toBe(400);
    const v = async (s: string) =>
      ok<SqlCheck>(
        await api.post(`/api/data-source/${sources.clickhouse}/sql/validate`, { sql: s }, cast.tokens.editor),
      );
    expect((await v('SELECT 1 AS one')).columns).toEqual([
      { name: 'one', db_type: 'UInt8', primitive_type: 'integer' },
    ]);
    expect((await v('SELECT nope FROM system.numbers')).valid).toBe(false);
    expect(await v('INSERT INTO t VALUES (1)')).toMatchObject({ valid: true, checked: false });
    const slow = ok<QueryView>(await run('clickhouse', { sql: 'SELECT sum(number) FROM numbers(100000000000)' }));
    expect(slow.state).toBe('running');
    expect(
      ok<QueryView>(await api.post(url('clickhouse', `/${slow.query_id}/cancel`), undefined, cast.tokens.editor)).state,
    ).toBe('cancelled');
  });
});

describe('history, access and the access log', () => {
  it('keeps a per-source history, paged and filtered by date', async () => {
    const kind = 'mysql';
    ok<QueryView>(await run(kind, { sql: 'SELECT 101' }));
    ok<QueryView>(await run(kind, { sql: 'SELECT 102' }));
    const page = ok<QueryPage>(await api.get(url(kind), cast.tokens.editor, { size: '2' }));
    expect(page.content.map((q) => q.sql)).toEqual(['SELECT 102', 'SELECT 101']);
    expect(page.content[0]).toMatchObject({
      state: 'finished',
      user_id: cast.users.editor.id,
      username: cast.users.editor.username,
      row_count: 1,
    });
    expect((page.content[0] as Partial<QueryView>).rows).toBeUndefined(); // the history carries no result rows
    expect(page.page.total_elements).toBeGreaterThanOrEqual(2);
    expect(ok<QueryPage>(await api.get(url(kind), cast.tokens.editor, { createdAtTo: '2001-01-01' })).content).toEqual(
      [],
    );
    expect((await api.get(url(kind), cast.tokens.editor, { sort: 'sql,asc' })).status).toBe(422);
  });

  it('keeps the stored rows of the newest 20 queries of a source only', async () => {
    const source = (await createSource(api, cast.tokens.editor, 'mysql', { workspace_id: cast.workspaceId })).id;
    const first = ok<QueryView>(
      await api.post(`/api/data-source/${source}/queries`, { sql: 'SELECT 1 AS first' }, cast.tokens.editor),
    );
    for (let i = 0; i < 20; i++)
      ok<QueryView>(await api.post(`/api/data-source/${source}/queries`, { sql: `SELECT ${i}` }, cast.tokens.editor));
    const old = ok<QueryView>(
      await api.get(`/api/data-source/${source}/queries/${first.query_id}`, cast.tokens.editor),
    );
    expect(old).toMatchObject({
      state: 'finished',
      row_count: 1,
      result_available: false,
      rows: [],
      columns: [{ name: 'first' }],
    });
    const history = ok<QueryPage>(
      await api.get(`/api/data-source/${source}/queries`, cast.tokens.editor, { size: '50' }),
    );
    expect(history.page.total_elements).toBe(21);
  });

  it('is for owners only', async () => {
    const kind = 'postgresql';
    expect((await api.post(url(kind), { sql: 'SELECT 1' })).status).toBe(401);
    expect((await run(kind, { sql: 'SELECT 1' }, cast.tokens.plain)).status).toBe(404);
    expect((await run(kind, { sql: 'SELECT 1' }, cast.tokens.viewer)).status).toBe(403);
    expect((await run(kind, { sql: 'SELECT 1' }, cast.tokens.sysadmin)).status).toBe(403);
    expect((await run(kind, { sql: 'SELECT 1' }, cast.tokens.wsAdmin)).status).toBe(200);
    expect((await api.get(url(kind), cast.tokens.viewer)).status).toBe(403);
    const q = ok<QueryView>(await run(kind, { sql: 'SELECT 1' }));
    expect((await api.get(url(kind, `/${q.query_id}`), cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(url(kind, `/${q.query_id}/cancel`), undefined, cast.tokens.viewer)).status).toBe(403);
    expect(
      (await api.post(`/api/data-source/${sources[kind]}/sql/validate`, { sql: 'SELECT 1' }, cast.tokens.viewer))
        .status,
    ).toBe(403);
    expect((await api.get(`/api/data-source/${sources[kind]}/access-log`, cast.tokens.viewer)).status).toBe(403);
    // another editor of the workspace is not the author
    const other = (await createSource(api, cast.tokens.wsAdmin, kind, { workspace_id: cast.workspaceId })).id;
    expect((await api.post(`/api/data-source/${other}/queries`, { sql: 'SELECT 1' }, cast.tokens.editor)).status).toBe(
      403,
    );
    expect((await api.get(url(kind, '/00000000-0000-4000-8000-000000000000'), cast.tokens.editor)).status).toBe(404);
    expect((await api.get(url(kind, '/not-a-uuid'), cast.tokens.editor)).status).toBe(422);
    expect((await run(kind, { sql: '   ' })).status).toBe(422);
    expect((await run(kind, { sql: 'SELECT 1', limit: 10_001 })).status).toBe(422);
  });

  it('lists who used the source, filtered by user and action', async () => {
    const kind = 'clickhouse';
    const base = `/api/data-source/${sources[kind]}`;
    // A reader of the source who is not its author (listing its schemas needs the raw level: Администратор here).
    ok<SchemaList>(await api.get(`${base}/schemas`, cast.tokens.wsAdmin));
    ok<QueryView>(await run(kind, { sql: 'SELECT 42' }));
    ok<SourceView>(await api.put(base, { name: 'ClickHouse (переименован)' }, cast.tokens.editor));
    const log = ok<AccessLogPage>(await api.get(`${base}/access-log`, cast.tokens.editor));
    const actions = new Set(log.content.map((l) => l.action));
    expect(actions).toEqual(new Set(['read', 'query', 'edit']));
    const reads = ok<AccessLogPage>(
      await api.get(`${base}/access-log`, cast.tokens.wsAdmin, {
        userId: String(cast.users.wsAdmin.id),
        action: 'read',
      }),
    );
    expect(reads.content.length).toBeGreaterThan(0);
    expect(
      reads.content.every((l) => l.user_id === cast.users.wsAdmin.id && l.username === cast.users.wsAdmin.username),
    ).toBe(true);
    const queries = ok<AccessLogPage>(
      await api.get(`${base}/access-log`, cast.tokens.editor, { action: 'query', sort: 'created_at,desc', size: '1' }),
    );
    expect(queries.content[0].detail).toBe('SELECT 42');
    expect(queries.page.size).toBe(1);
    expect((await api.get(`${base}/access-log`, cast.tokens.editor, { action: 'delete' })).status).toBe(422);
  });
});
