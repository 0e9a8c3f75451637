// A source that drops its connection (a restart mid-query, or a listener that speaks the protocol and hangs up)
// fails the call in progress with a clean ConnectorError and nothing else: no unhandled 'error' event, no broken
// pooled connection reused, and the connector works again once the server is back.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectorError,
  createConnector,
  type Connector,
  type SourceKind,
  type SourceSettings,
} from '../../../adapters/sources';
import { fakeClickHouseHttp, fakeMysql, fakePostgres, FOREIGN_BODY_MARKER, type FakeServer } from './fake-servers';
import { clickhouseSettings, closedPort, mysqlSettings, pgSettings, silentServer } from './servers';

/** The outcomes a user may see for a connection failure; nothing else (no driver or foreign text). */
export const OUTCOME = {
  refused: /^Сервер 127\.0\.0\.1:\d+ отклонил подключение$/,
  timeout: /^Сервер 127\.0\.0\.1:\d+ не ответил за \d+(\.\d+)? с$/,
  dropped: /^Подключение к источнику прервано$/,
  notServer: (product: string) => new RegExp(`^Сервер 127\\.0\\.0\\.1:\\d+ не является сервером ${product}$`),
};

// Every unhandled error of this worker: must stay empty (vitest would also fail the run on one).
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);
beforeAll(() => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
afterAll(() => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

const open: { connector?: Connector; server?: FakeServer }[] = [];
afterEach(async () => {
  // Late socket events arrive after the call failed: give them a moment, then nothing may have escaped.
  await new Promise((r) => setTimeout(r, 100));
  for (const o of open.splice(0)) {
    await o.connector?.close().catch(() => undefined);
    await o.server?.close();
  }
  expect(uncaught.splice(0)).toEqual([]);
});

function connect(kind: SourceKind, settings: SourceSettings, server?: FakeServer): Connector {
  const connector = createConnector(kind, settings, { connectTimeoutMs: 1_000, poolSize: 2 });
  open.push({ connector, server });
  return connector;
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  const e = err as ConnectorError;
  expect(e.message).not.toContain(FOREIGN_BODY_MARKER);
  return e;
}

const SETTINGS = {
  postgresql: (port: number) => pgSettings({ port }),
  mysql: (port: number) => mysqlSettings({ port }),
  clickhouse: (port: number) => clickhouseSettings({ http_port: port }),
};
const PRODUCT = { postgresql: 'PostgreSQL', mysql: 'MySQL', clickhouse: 'ClickHouse' };
const SQL = 'SELECT id, name FROM t';

describe('postgresql fake server', () => {
  it.each(['connect', 'after-auth', 'mid-result'] as const)(
    'drop at %s: every call fails with «прервано», and again on retry',
    async (stage) => {
      const server = await fakePostgres(stage);
      const c = connect('postgresql', SETTINGS.postgresql(server.port), server);
      for (let round = 0; round < 2; round++) {
        for (const call of [
          () => c.check(),
          () => c.listSchemas(),
          () => c.query(SQL, [], { limit: 10, readOnly: true }),
          () => c.query(SQL, []),
        ]) {
          const e = await failure(call());
          expect({ kind: e.kind, message: e.message }).toMatchObject({
            kind: 'connection',
            message: expect.stringMatching(OUTCOME.dropped),
          });
        }
      }
    },
  );
});

describe('mysql fake server', () => {
  it.each(['connect', 'handshake', 'after-auth', 'mid-result'] as const)(
    'drop at %s: every call fails with «прервано»',
    async (stage) => {
      const server = await fakeMysql(stage);
      const c = connect('mysql', SETTINGS.mysql(server.port), server);
      for (let round = 0; round < 2; round++) {
        const calls =
          stage === 'after-auth' || stage === 'mid-result'
            ? [
                () => c.query(SQL, [], { limit: 10, readOnly: true }),
                () => c.query(SQL, []),
                async () => {
                  for await (const _ of c.stream(SQL, [])) {
                    /* read */
                  }
                },
              ]
            : [() => c.check(), () => c.listSchemas(), () => c.query(SQL, [])];
        for (const call of calls) {
          const e = await failure(call());
          expect({ kind: e.kind, message: e.message }).toMatchObject({
            kind: 'connection',
            message: expect.stringMatching(OUTCOME.dropped),
          });
        }
      }
    },
  );
});

describe('clickhouse over HTTP', () => {
  it.each(['connect', 'headers', 'mid-body'] as const)('drop at %s: the call fails with «прервано»', async (mode) => {
    const server = await fakeClickHouseHttp(mode);
    const c = connect('clickhouse', SETTINGS.clickhouse(server.port), server);
    for (let round = 0; round < 2; round++) {
      const e = await failure(c.query(SQL, [], { limit: 10, readOnly: true }));
      expect({ kind: e.kind, message: e.message }).toMatchObject({
        kind: 'connection',
        message: expect.stringMatching(OUTCOME.dropped),
      });
    }
    if (mode !== 'mid-body') {
      const e = await failure(c.check());
      expect(e.message).toMatch(OUTCOME.dropped);
    }
  });

  it.each(['foreign-200', 'foreign-404'] as const)(
    'a %s web service is «не является сервером ClickHouse», never its body',
    async (mode) => {
      const server = await fakeClickHouseHttp(mode);
      const c = connect('clickhouse', SETTINGS.clickhouse(server.port), server);
      for (const call of [() => c.check(), () => c.listSchemas(), () => c.query(SQL, [])]) {
        const e = await failure(call());
        expect({ kind: e.kind, message: e.message }).toMatchObject({
          kind: 'connection',
          message: expect.stringMatching(OUTCOME.notServer('ClickHouse')),
        });
      }
    },
  );
});

describe.each(['postgresql', 'mysql', 'clickhouse'] as const)('%s: closed and silent ports', (kind) => {
  it('a closed port is «отклонил подключение»', async () => {
    const c = connect(kind, SETTINGS[kind](await closedPort()));
    const e = await failure(c.check());
    expect({ kind: e.kind, message: e.message }).toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(OUTCOME.refused),
    });
  });

  it('a silent port is «не ответил за N с»', async () => {
    const silent = await silentServer();
    const c = connect(kind, SETTINGS[kind](silent.port), { close: () => silent.close() } as FakeServer);
    const e = await failure(c.check());
    expect({ kind: e.kind, message: e.message }).toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(OUTCOME.timeout),
    });
  }, 15_000);
});

describe('a non-database listener on a database port', () => {
  it.each(['postgresql', 'mysql'] as const)(
    '%s: an HTTP service is «не является сервером …»',
    async (kind) => {
      const server = await fakeClickHouseHttp('foreign-200');
      const c = connect(kind, SETTINGS[kind](server.port), server);
      const e = await failure(c.check());
      expect(e.message).not.toContain('html');
      expect(e.message).toMatch(
        new RegExp(`${OUTCOME.notServer(PRODUCT[kind]).source}|${OUTCOME.timeout.source}|${OUTCOME.dropped.source}`),
      );
    },
    15_000,
  );
});

describe('the real PostgreSQL source, its backend terminated mid-query', () => {
  it('fails the running query with «прервано»; the next query works', async () => {
    // A name of its own, so that only this connector's backend is terminated.
    const appName = `drop_test_${process.pid}_${Date.now()}`;
    const c = connect('postgresql', pgSettings({ initial_sql: `SET application_name = '${appName}'` }));
    const admin = connect('postgresql', pgSettings());
    const running = c.query('SELECT pg_sleep(5)', [], { readOnly: true });
    const caught = running.then(
      () => undefined,
      (e: unknown) => e,
    );
    let killed = 0;
    for (let i = 0; i < 50 && killed === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const rows = (
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`,
          [appName],
        )
      ).rows;
      killed = rows.length;
    }
    expect(killed).toBe(1);
    const e = (await caught) as ConnectorError;
    expect(e).toBeInstanceOf(ConnectorError);
    expect({ kind: e.kind, message: e.message }).toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(OUTCOME.dropped),
    });
    expect((await c.query('SELECT 1 AS one', [])).rows).toEqual([[1]]);
    for (let i = 0; i < 3; i++) expect((await c.query('SELECT 2 AS two', [], { readOnly: true })).rows).toEqual([[2]]);
  });
});

describe('an SSH tunnel whose SSH server cannot be used', () => {
  const viaSsh = (port: number) =>
    pgSettings({ use_ssh: true, ssh_tunnel: { host: '127.0.0.1', port, username: 'u', password: 'p' } });

  it('a closed SSH port is «SSH-туннель: … отклонил подключение»', async () => {
    const c = connect('postgresql', viaSsh(await closedPort()));
    const e = await failure(c.check());
    expect({ kind: e.kind, message: e.message }).toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(/^SSH-туннель: Сервер 127\.0\.0\.1:\d+ отклонил подключение$/),
    });
  });

  it('an SSH port that hangs up at once is «SSH-туннель: Подключение к источнику прервано»', async () => {
    const server = await fakePostgres('connect');
    const c = connect('postgresql', viaSsh(server.port), server);
    const e = await failure(c.check());
    expect({ kind: e.kind, message: e.message }).toMatchObject({
      kind: 'connection',
      message: expect.stringMatching(
        /^SSH-туннель: (Подключение к источнику прервано|Сервер 127\.0\.0\.1:\d+ не является сервером SSH)$/,
      ),
    });
  });

  it('a web service on the SSH port is not an SSH server, and its body is not shown', async () => {
    const server = await fakeClickHouseHttp('foreign-404');
    const c = connect('postgresql', viaSsh(server.port), server);
    const e = await failure(c.check());
    expect(e.kind).toBe('connection');
    expect(e.message).toMatch(
      /^SSH-туннель: (Сервер 127\.0\.0\.1:\d+ (не является сервером SSH|не ответил за \d+(\.\d+)? с)|Подключение к источнику прервано)$/,
    );
  }, 15_000);
});

describe('an idle pooled connection that the server closes', () => {
  it('postgresql: the pool drops it and the next query gets a new one', async () => {
    const appName = `idle_drop_${process.pid}_${Date.now()}`;
    const c = connect('postgresql', pgSettings({ initial_sql: `SET application_name = '${appName}'` }));
    const admin = connect('postgresql', pgSettings());
    const [[before]] = (await c.query('SELECT pg_backend_pid()', [])).rows;
    const killed = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
      [appName],
    );
    expect(killed.rows).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200));
    const [[after]] = (await c.query('SELECT pg_backend_pid()', [])).rows;
    expect(after).not.toBe(before);
  });

  it('mysql: the pool drops it and the next query gets a new one', async () => {
    const c = connect('mysql', mysqlSettings());
    const admin = connect('mysql', mysqlSettings());
    const [[before]] = (await c.query('SELECT CONNECTION_ID()', [])).rows;
    await admin.query(`KILL ${Number(before)}`, []);
    await new Promise((r) => setTimeout(r, 200));
    const [[after]] = (await c.query('SELECT CONNECTION_ID()', [])).rows;
    expect(after).not.toBe(before);
  });
});
