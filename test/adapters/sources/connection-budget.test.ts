import { afterAll, afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  ConnectorCache,
  ConnectorError,
  DEFAULT_CONNECTION_LIMITS,
  sourceConnectionBudget,
  type Connector,
  type SourceSettings,
} from '../../../adapters/sources';
import { ConnectionBudget } from '../../../adapters/sources/connection-budget';
import { clickhouseSettings, mysqlSettings, pgSettings, randomName } from './servers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const connectors = new ConnectorCache();

afterEach(async () => {
  await connectors.closeAll();
  sourceConnectionBudget.configure(DEFAULT_CONNECTION_LIMITS);
});
afterAll(() => connectors.closeAll());

/** Connections the test server holds under `app` (set by initial_sql), seen from a connection of the test's own. */
async function serverConnections(app: string): Promise<number> {
  const c = new pg.Client({ ...pgClientConfig(), application_name: 'budget-test-observer' });
  await c.connect();
  try {
    const res = await c.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [
      app,
    ]);
    return Number(res.rows[0].n);
  } finally {
    await c.end();
  }
}

function pgClientConfig(): pg.ClientConfig {
  const s = pgSettings();
  return { host: s.host, port: s.port, user: s.username, password: s.password || undefined, database: s.db };
}

describe('ConnectionBudget', () => {
  it('grants up to the per-server and total caps, hands freed slots to waiters in order, and times out with «Слишком много подключений»', async () => {
    const budget = new ConnectionBudget({ total: 3, perServer: 2, waitMs: 300 });
    const a1 = await budget.acquire('a:1');
    const a2 = await budget.acquire('a:1');
    const b1 = await budget.acquire('b:1');
    expect([budget.inUse(), budget.inUse('a:1'), budget.inUse('b:1')]).toEqual([3, 2, 1]);

    const started = Date.now();
    await expect(budget.acquire('c:1')).rejects.toMatchObject({
      kind: 'busy',
      message: 'Слишком много подключений к серверу c:1: повторите позже',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);

    const waiting = budget.acquire('a:1');
    a1();
    a1(); // giving back twice changes nothing
    const a3 = await waiting;
    expect(budget.inUse('a:1')).toBe(2);
    for (const release of [a2, a3, b1]) release();
    expect(budget.inUse()).toBe(0);
  });

  it('asks the evictor for idle pools that hold slots before it waits', async () => {
    const budget = new ConnectionBudget({ total: 10, perServer: 1, waitMs: 1000 });
    const owner = {};
    const held = await budget.acquire('s:1', { owner });
    const asked: (string | undefined)[] = [];
    budget.setEvictor(async (server, holders) => {
      asked.push(server);
      if (holders.has(owner)) setTimeout(held, 10); // closing the idle pool closes its connection
      return true;
    });
    const next = await budget.acquire('s:1');
    expect(asked[0]).toBe('s:1');
    next();
  });
});

describe('connectors take a budget slot for every physical connection', () => {
  const SLEEP: Record<'postgresql' | 'mysql' | 'clickhouse', [() => SourceSettings, string, string]> = {
    postgresql: [pgSettings, 'SELECT pg_sleep(2)', '5432'],
    mysql: [mysqlSettings, 'SELECT SLEEP(2)', String(mysqlSettings().port)],
    clickhouse: [clickhouseSettings, 'SELECT sleep(2)', String(clickhouseSettings().http_port)],
  };

  it.each(Object.keys(SLEEP) as (keyof typeof SLEEP)[])(
    "%s: a call waits a bounded time when the server's slots are busy, then fails",
    async (kind) => {
      const [settings, slow, port] = SLEEP[kind];
      sourceConnectionBudget.configure({ perServer: 2, total: 50, waitMs: 800 });
      const id = randomName('budget');
      const [c1, c2, c3] = [1, 2, 3].map((n) => connectors.get(`${id}-${n}`, kind, settings()));
      const busy = [c1.query(slow, []), c2.query(slow, [])];
      const server = `${settings().host}:${port}`;
      while (sourceConnectionBudget.inUse(server) < 2) await sleep(20);

      const started = Date.now();
      const err = await c3.query('SELECT 1', []).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectorError);
      expect(err).toMatchObject({
        kind: 'busy',
        message: `Слишком много подключений к серверу ${server}: повторите позже`,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(700);
      expect(Date.now() - started).toBeLessThan(1900);
      expect(sourceConnectionBudget.inUse(server)).toBeLessThanOrEqual(2);

      await Promise.all(busy);
      // the other pools are idle now: the least recently used one is closed to make room
      expect((await c3.query('SELECT 1', [])).rows.length).toBe(1);
      expect(sourceConnectionBudget.inUse(server)).toBeLessThanOrEqual(2);
    },
    20_000,
  );

  it('closes idle pools after the idle timeout, giving their slots back', async () => {
    const app = randomName('idle');
    const c: Connector = connectors.get(
      app,
      'postgresql',
      pgSettings({ initial_sql: `SET application_name = '${app}'` }),
      { idleTimeoutMs: 300 },
    );
    await Promise.all([c.query('SELECT pg_sleep(0.2)', []), c.query('SELECT pg_sleep(0.2)', [])]);
    expect(await serverConnections(app)).toBe(2);
    expect(sourceConnectionBudget.inUse('127.0.0.1:5432')).toBe(2);
    await sleep(900);
    expect(await serverConnections(app)).toBe(0);
    expect(sourceConnectionBudget.inUse('127.0.0.1:5432')).toBe(0);
  });
});
