// A source that hangs up (at connect, after authentication, mid-result), a silent or closed port, or a web service
// on the database port: every REST call on it answers a clean envelope with one of the few connection outcomes, and
// the platform goes on answering. A real PostgreSQL backend terminated mid-query fails only that request.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  fakeClickHouseHttp,
  fakeMysql,
  fakePostgres,
  FOREIGN_BODY_MARKER,
  type FakeServer,
} from '../../adapters/sources/fake-servers';
import { closedPort, pgSettings, randomName, silentServer } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import type { RestResponse } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import type { WidgetView } from '../widgets/world';
import {
  SERVERS,
  createSource,
  ok,
  sleep,
  type CheckResult,
  type DbKind,
  type QueryView,
  type SchemaList,
} from './helpers';

let cast: RoleCast;
const servers: FakeServer[] = [];
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);

// Registered before useTestApp: the listeners are on while the app starts and closes, and the fake servers are
// closed only after the app has let go of its connections to them (after-hooks run in reverse order).
beforeAll(() => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});
const { t, api } = useTestApp();
beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});
afterEach(async () => {
  await sleep(100);
  expect(uncaught.splice(0)).toEqual([]);
  // the platform still answers
  expect((await api.get('/api/settings', cast.tokens.plain)).status).toBe(200);
});

const PRODUCT: Record<DbKind, string> = { postgresql: 'PostgreSQL', mysql: 'MySQL', clickhouse: 'ClickHouse' };
const outcome = (kind: DbKind) =>
  new RegExp(
    '^(Подключение к источнику прервано' +
      `|Сервер 127\\.0\\.0\\.1:\\d+ (отклонил подключение|не ответил за \\d+(\\.\\d+)? с|не является сервером ${PRODUCT[kind]}))$`,
  );

function portSettings(kind: DbKind, port: number) {
  return kind === 'clickhouse' ? { ...SERVERS.clickhouse(), http_port: port } : { ...SERVERS[kind](), port };
}

async function fake(kind: DbKind, stage: string): Promise<FakeServer> {
  const s =
    kind === 'postgresql'
      ? await fakePostgres(stage as never)
      : kind === 'mysql'
        ? await fakeMysql(stage as never)
        : await fakeClickHouseHttp(stage as never);
  servers.push(s);
  return s;
}

/** A 4xx envelope (never a 500) with one of the outcomes, and nothing of a foreign body. */
function expectCleanFailure(res: RestResponse<unknown>, kind: DbKind) {
  expect(JSON.stringify(res.body)).not.toContain(FOREIGN_BODY_MARKER);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, error: { message: expect.stringMatching(outcome(kind)) } });
}

const SCENARIOS: [DbKind, string][] = [
  ['postgresql', 'connect'],
  ['postgresql', 'after-auth'],
  ['postgresql', 'mid-result'],
  ['mysql', 'connect'],
  ['mysql', 'handshake'],
  ['mysql', 'after-auth'],
  ['mysql', 'mid-result'],
  ['clickhouse', 'connect'],
  ['clickhouse', 'headers'],
  ['clickhouse', 'mid-body'],
  ['clickhouse', 'foreign-200'],
  ['clickhouse', 'foreign-404'],
];

describe('POST /api/data-source/check against a source that hangs up', () => {
  it.each(SCENARIOS)('%s, dropped at %s: ok false with a connection outcome', async (kind, stage) => {
    const server = await fake(kind, stage);
    const res = ok<CheckResult>(
      await api.post(
        '/api/data-source/check',
        { type: kind, settings: portSettings(kind, server.port) },
        cast.tokens.plain,
      ),
    );
    expect(JSON.stringify(res)).not.toContain(FOREIGN_BODY_MARKER);
    expect(res).toMatchObject({ ok: false, message: expect.stringMatching(outcome(kind)) });
  });

  it.each(['postgresql', 'mysql', 'clickhouse'] as const)(
    '%s: closed and silent ports',
    async (kind) => {
      const closed = ok<CheckResult>(
        await api.post(
          '/api/data-source/check',
          { type: kind, settings: portSettings(kind, await closedPort()) },
          cast.tokens.plain,
        ),
      );
      expect(closed).toEqual({
        ok: false,
        message: expect.stringMatching(/^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/),
      });
      const silent = await silentServer();
      try {
        const res = ok<CheckResult>(
          await api.post(
            '/api/data-source/check',
            { type: kind, settings: portSettings(kind, silent.port) },
            cast.tokens.plain,
          ),
        );
        expect(res).toEqual({
          ok: false,
          message: expect.stringMatching(/^Сервер 127\.0\.0\.1:\d+ не ответил за \d+(\.\d+)? с$/),
        });
      } finally {
        await silent.close();
      }
    },
    30_000,
  );
});

describe('a saved source that hangs up: schemas, preview, SQL console', () => {
  it.each(SCENARIOS)('%s, dropped at %s', async (kind, stage) => {
    const server = await fake(kind, stage);
    const src = await createSource(api, cast.tokens.editor, kind, {
      workspace_id: cast.workspaceId,
      settings: portSettings(kind, server.port),
    });
    const base = `/api/data-source/${src.id}`;
    expectCleanFailure(await api.get(`${base}/schemas`, cast.tokens.editor), kind);
    expectCleanFailure(await api.post(`${base}/preview`, { schema: 'public', table: 't' }, cast.tokens.editor), kind);
    const q = await api.post(`${base}/queries`, { sql: 'SELECT id, name FROM t' }, cast.tokens.editor);
    expect(JSON.stringify(q.body)).not.toContain(FOREIGN_BODY_MARKER);
    if (q.status === 200) {
      // the console keeps a failed query in its history with the outcome as its error
      expect(ok<QueryView>(q)).toMatchObject({ state: 'failed', error: expect.stringMatching(outcome(kind)) });
    } else {
      expectCleanFailure(q, kind);
    }
  });
});

describe('a real PostgreSQL source whose backend is terminated mid-query', () => {
  const view = randomName('sleepy');
  const appName = randomName('drop_rest');
  let admin: pg.Client;

  beforeAll(async () => {
    const s = pgSettings();
    admin = new pg.Client({ host: s.host, port: s.port, user: s.username, password: s.password, database: s.db });
    await admin.connect();
    await admin.query(`CREATE VIEW public.${view} AS SELECT 1 AS id, pg_sleep(5)::text AS slept`);
  });
  afterAll(async () => {
    await admin.query(`DROP VIEW IF EXISTS public.${view}`);
    await admin.end();
  });

  async function terminateWhileRunning(request: Promise<RestResponse>): Promise<RestResponse> {
    let killed = 0;
    for (let i = 0; i < 50 && killed === 0; i++) {
      await sleep(100);
      const r = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
        [appName],
      );
      killed = r.rowCount ?? 0;
    }
    expect(killed).toBe(1);
    return request;
  }

  it('widget data and dataset preview fail with a clean envelope; the source still answers', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { initial_sql: `SET application_name = '${appName}'` },
    });
    // A dataset and a widget over the sleepy view: each read is terminated while it sleeps.
    const ds = ok<DatasetDetails>(
      await api.post(
        '/api/dataset',
        { name: randomName('ds'), workspace_id: cast.workspaceId, live: true, data_source_ids: [src.id] },
        cast.tokens.editor,
      ),
    );
    const schema = {
      objects: [{ id: -1, data_source_id: src.id, name: 'v', schema: 'public', table: view }],
      fields: [
        { id: -11, object_id: -1, name: 'id', column: 'id', primitive_type: 'integer' },
        { id: -12, object_id: -1, name: 'slept', column: 'slept', primitive_type: 'string' },
      ],
      relations: [],
      hierarchies: [],
      filters: [],
      parameters: [],
    };
    ok(await api.put(`/api/dataset/${ds.id}/schema`, schema, cast.tokens.editor));
    const widget = ok<WidgetView>(
      await api.post(
        '/api/widget',
        {
          name: 'w',
          type: 'table',
          dataset_id: ds.id,
          rows: [{ id: 'id', sql: '[v.id]' }],
          columns: [{ id: 'n', sql: 'COUNT([v.slept])' }],
        },
        cast.tokens.editor,
      ),
    );
    for (const read of [
      () => api.post(`/api/widget/${widget.id}/data`, {}, cast.tokens.editor),
      () => api.post(`/api/dataset/${ds.id}/preview`, { limit: 5 }, cast.tokens.editor),
    ]) {
      const res = await terminateWhileRunning(read());
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: { message: 'Подключение к источнику прервано' } });
    }
    expect(ok<SchemaList>(await api.get(`/api/data-source/${src.id}/schemas`, cast.tokens.editor)).content).toContain(
      'public',
    );
  }, 60_000);

  it('preview fails with a clean envelope; the next preview works', async () => {
    const src = await createSource(api, cast.tokens.editor, 'postgresql', {
      workspace_id: cast.workspaceId,
      settings: { initial_sql: `SET application_name = '${appName}'` },
    });
    const base = `/api/data-source/${src.id}`;
    const res = await terminateWhileRunning(
      api.post(`${base}/preview`, { schema: 'public', table: view }, cast.tokens.editor),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { message: 'Подключение к источнику прервано' } });
    expect(ok<SchemaList>(await api.get(`${base}/schemas`, cast.tokens.editor)).content).toContain('public');

    const console = api.post(`${base}/queries`, { sql: 'SELECT pg_sleep(5)' }, cast.tokens.editor);
    const q = await terminateWhileRunning(console);
    if (q.status === 200) {
      expect(ok<QueryView>(q)).toMatchObject({ state: 'failed', error: 'Подключение к источнику прервано' });
    } else {
      expect(q.status).toBe(400);
      expect(q.body).toMatchObject({ success: false, error: { message: 'Подключение к источнику прервано' } });
    }
    expect(
      ok<QueryView>(await api.post(`${base}/queries`, { sql: 'SELECT 7 AS seven' }, cast.tokens.editor)),
    ).toMatchObject({ state: 'finished', rows: [[7]] });
  }, 40_000);
});
