// Reading many sources on one server must not take that server's connections from everybody else: the platform
// holds at most SOURCE_CONNECTIONS_PER_SERVER of them, whatever the number of sources.
import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { AppError } from '../../../server/kernel/errors';
import { asSourceError } from '../../../server/data-sources/connector-errors';
import { ConnectorError } from '../../../adapters/sources';
import { pgSettings } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { createSource, randomName } from './helpers';

const PER_SERVER = 4;
/** How many sources are read; a run against code without the cap should use fewer (the server allows 100 in all). */
const SOURCES = Number(process.env.BUDGET_TEST_SOURCES ?? 100);

const { t, api } = useTestApp(
  {
    SOURCE_CONNECTIONS_PER_SERVER: String(PER_SERVER),
    SOURCE_CONNECTIONS_TOTAL: '20',
    SOURCE_IDLE_TIMEOUT_MS: '1000',
    SOURCE_CONNECTION_WAIT_MS: '3000',
  },
  { timeout: 60_000 },
);
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
}, 60_000);

/** Samples how many connections the server holds under `app` until stopped; returns the highest count seen. */
function watchServer(app: string) {
  const s = pgSettings();
  const observer = new pg.Client({
    host: s.host,
    port: s.port,
    user: s.username,
    password: s.password || undefined,
    database: s.db,
    application_name: 'budget-observer',
  });
  let max = 0;
  let running = true;
  const loop = (async () => {
    await observer.connect();
    while (running) {
      const res = await observer.query<{ n: string }>(
        'SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1',
        [app],
      );
      max = Math.max(max, Number(res.rows[0].n));
      await new Promise((r) => setTimeout(r, 10));
    }
    await observer.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return max;
    },
  };
}

describe('connections to one source server', () => {
  it(`never exceed the per-server cap while ${SOURCES} sources are read one after another and in parallel`, async () => {
    const app = randomName('budget_app');
    const ids: number[] = [];
    for (let i = 0; i < SOURCES; i++) {
      const src = await createSource(api, cast.tokens.editor, 'postgresql', {
        workspace_id: cast.workspaceId,
        settings: { initial_sql: `SET application_name = '${app}'` },
      });
      ids.push(src.id);
    }
    const watch = watchServer(app);
    const statuses: number[] = [];
    try {
      for (const id of ids) statuses.push((await api.get(`/api/data-source/${id}/schemas`, cast.tokens.editor)).status);
      // a second round, eight at a time: more readers than slots, so some wait for an idle pool to be closed
      for (let i = 0; i < ids.length; i += 8) {
        const batch = ids
          .slice(i, i + 8)
          .map((id) => api.post(`/api/data-source/${id}/metadata/refresh`, undefined, cast.tokens.editor));
        statuses.push(...(await Promise.all(batch)).map((r) => r.status));
      }
    } finally {
      const max = await watch.stop();
      expect(max).toBeGreaterThan(0);
      expect(max).toBeLessThanOrEqual(PER_SERVER);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 180_000);

  it('answers 503 «Слишком много подключений…» for a full budget', () => {
    const err = asSourceError(
      new ConnectorError('Слишком много подключений к серверу 127.0.0.1:5432: повторите позже', 'busy'),
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      status: 503,
      message: 'Слишком много подключений к серверу 127.0.0.1:5432: повторите позже',
    });
  });
});
