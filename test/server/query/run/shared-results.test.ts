import crypto from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { QueryResult } from '../../../../adapters/sources';
import { SharedRedis } from '../../../../server/cache/redis';
import { QueryEngine } from '../../../../server/query/run/engine';
import { SharedResults } from '../../../../server/query/run/shared-results';
import type { ExecutableTarget } from '../../../../server/query/run/targets';
import type { CompiledQuery } from '../../../../server/query/compile/types';

/*
 * The second level of the result cache in a real Redis: two engines (two nodes, each with its own client and own
 * first level) under one key prefix. What one read from its source the other answers without a source query, under
 * the same key only (data key, data version, SQL, parameters), no longer than the writer's TTL, values unchanged;
 * big results stay local, and a Redis that does not answer is a miss, not an error or a wait.
 */

const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
const clients: SharedRedis[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
});

function redis(prefix: string, url = REDIS_URL): SharedRedis {
  const c = new SharedRedis({ url, keyPrefix: prefix, log: () => undefined });
  clients.push(c);
  return c;
}

/** Two nodes' engines on one Redis prefix of their own. */
function twoNodes(ttlMs = 60_000) {
  const prefix = `test-${crypto.randomUUID()}:`;
  const engine = () =>
    new QueryEngine({ ttlMs, maxBytes: 64 << 20, maxEntries: 100, timeoutMs: 1_000 }, new SharedResults(redis(prefix)));
  return [engine(), engine(), prefix] as const;
}

const query = (sql = 'SELECT 1', params: unknown[] = []): CompiledQuery => ({
  dialect: 'postgresql',
  sql,
  params,
  columns: [{ key: 'a', alias: '__c0' }],
  dataSourceId: 1,
  fetchLimit: 100,
});

function target(rows: unknown[][], dataKey = 'source:1:x') {
  const t: ExecutableTarget & { calls: number } = {
    calls: 0,
    dialect: 'postgresql',
    dataKey,
    run: async (): Promise<QueryResult> => {
      t.calls++;
      return { columns: [], rows, truncated: true };
    },
    stream: () => Promise.reject(new Error('not streamed here')),
  };
  return t;
}

const VALUES = [[1, -0, NaN, Infinity, -Infinity, null, true, 'чай', '2024-01-02T10:00:00', '9007199254740993']];

describe('the shared (Redis) level of the result cache', () => {
  it('a result one node read is answered by the other without a source query, values unchanged', async () => {
    const [a, b] = twoNodes();
    const src = target(VALUES);
    expect(await a.execute(src, query(), 1)).toEqual({ rows: VALUES, truncated: true, cached: false });
    await a.shared!.flushed();
    const answer = await b.execute(src, query(), 1);
    expect(answer).toEqual({ rows: VALUES, truncated: true, cached: true });
    expect(Object.is(answer.rows[0][1], -0)).toBe(true);
    expect([src.calls, a.executions, b.executions, b.sharedHits]).toEqual([1, 1, 0, 1]);
    // The answer is now the node's own: a repeat does not ask Redis again.
    await b.execute(src, query(), 1);
    expect(b.sharedHits).toBe(1);
  });

  it('another data version, data key, SQL or parameter value is a miss', async () => {
    const [a, b] = twoNodes();
    const src = target([[1]]);
    await a.execute(src, query('SELECT 1', ['чай']), 1);
    await a.shared!.flushed();
    await b.execute(src, query('SELECT 1', ['чай']), 2); // the dataset was saved
    await b.execute(target([[1]], 'source:1:changed-settings'), query('SELECT 1', ['чай']), 1);
    await b.execute(src, query('SELECT 2', ['чай']), 1);
    await b.execute(src, query('SELECT 1', ['кофе']), 1); // another reader's row-rule value
    expect([b.executions, b.sharedHits]).toEqual([4, 0]);
  });

  it('Redis holds no query text: an entry is under the SHA-256 of its key, as nodes of every version write it', async () => {
    const [a, , prefix] = twoNodes();
    const src = target([[1]]);
    const long = `SELECT 1 WHERE 'x' IN (${Array.from({ length: 300 }, (_, i) => `$${i + 1}`).join(', ')})`;
    await a.execute(src, query('SELECT 1', ['секрет-читателя']), 1);
    await a.execute(
      src,
      query(
        long,
        Array.from({ length: 300 }, (_, i) => `v${i}`),
      ),
      1,
    );
    await a.shared!.flushed();
    const keys = await redis('').command(1_000, (c) => c.keys(`${prefix}*`));
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(k).toMatch(/^test-[0-9a-f-]+:result:v1:[A-Za-z0-9+/]{43}=$/);
    // The short key's entry is where a node that hashed every key looks: the text's SHA-256.
    const text = `source:1:x\u00001\u0000100\u0000SELECT 1\u0000${JSON.stringify(['секрет-читателя'])}`;
    expect(keys).toContain(`${prefix}result:v1:${crypto.hash('sha256', text, 'base64')}`);
  });

  it('a node keeps a shared answer no longer than what remains of the writer’s TTL', async () => {
    const [a, b] = twoNodes(600);
    const src = target([[1]]);
    await a.execute(src, query(), 1);
    await a.shared!.flushed();
    await new Promise((r) => setTimeout(r, 400));
    await b.execute(src, query(), 1);
    expect([b.executions, b.sharedHits]).toEqual([0, 1]);
    // 700 ms after the source read: gone from Redis and from b's copy, though b took it only 300 ms ago.
    await new Promise((r) => setTimeout(r, 300));
    await b.execute(src, query(), 1);
    expect([b.executions, b.sharedHits]).toEqual([1, 1]);
  });

  it('a result over the entry cap stays on its node', async () => {
    const [a, b] = twoNodes();
    const src = target([['x'.repeat(1_200_000)]]);
    await a.execute(src, query(), 1);
    await a.shared!.flushed();
    await b.execute(src, query(), 1);
    expect([b.executions, b.sharedHits]).toEqual([1, 0]);
  });

  it('without the cache (TTL 0) nothing is stored or looked up', async () => {
    const [a, b] = twoNodes(0);
    const src = target([[1]]);
    await a.execute(src, query(), 1);
    await a.shared!.flushed();
    await b.execute(src, query(), 1);
    expect([a.executions, b.executions, b.sharedHits]).toEqual([1, 1, 0]);
  });

  it('a Redis that does not answer is a miss at once: the source answers, with one notice', async () => {
    const log = vi.fn();
    const down = new SharedRedis({ url: 'redis://127.0.0.1:1', keyPrefix: 'x:', log });
    clients.push(down);
    const e = new QueryEngine(
      { ttlMs: 60_000, maxBytes: 1 << 20, maxEntries: 100, timeoutMs: 1_000 },
      new SharedResults(down),
    );
    const src = target([[1]]);
    const since = performance.now();
    for (let i = 0; i < 3; i++) await e.execute(src, query(`SELECT ${i}`), 1);
    await e.shared!.flushed();
    expect(performance.now() - since).toBeLessThan(1_000); // the refused connection is not waited for
    expect(e.executions).toBe(3);
    expect(log).toHaveBeenCalledTimes(1);
    expect(String(log.mock.calls[0][0])).toMatch(/unreachable/);
  });
});
