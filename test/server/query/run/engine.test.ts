import { describe, expect, it } from 'vitest';
import { ConnectorError, type QueryResult } from '../../../../adapters/sources';
import { AppError } from '../../../../server/kernel/errors';
import { QueryEngine } from '../../../../server/query/run/engine';
import { ResultCache } from '../../../../server/query/run/result-cache';
import type { ExecutableTarget } from '../../../../server/query/run/targets';
import type { CompiledQuery } from '../../../../server/query/compile/types';

const query = (sql = 'SELECT 1', params: unknown[] = []): CompiledQuery => ({
  dialect: 'postgresql',
  sql,
  params,
  columns: [{ key: 'a', alias: '__c0' }],
  dataSourceId: 1,
  fetchLimit: 2,
});

function fakeTarget(answer: (sql: string) => Promise<QueryResult> | QueryResult, dataKey = 'source:1:x') {
  const calls: { sql: string; params: unknown[]; opts: unknown }[] = [];
  const target: ExecutableTarget = {
    dialect: 'postgresql',
    dataKey,
    run: async (sql, params, opts) => {
      calls.push({ sql, params, opts });
      return answer(sql);
    },
    stream: () => Promise.reject(new Error('not streamed here')),
  };
  return { target, calls };
}
const rows = (...r: unknown[][]): QueryResult => ({ columns: [], rows: r, truncated: false });
const engine = (over: Partial<ConstructorParameters<typeof QueryEngine>[0]> = {}) =>
  new QueryEngine({ ttlMs: 60_000, maxBytes: 1 << 20, maxEntries: 100, timeoutMs: 1000, ...over });

describe('query engine', () => {
  it('caches by SQL, params and data version, for the TTL', async () => {
    const e = engine({ ttlMs: 50 });
    const { target, calls } = fakeTarget(() => rows([1]));
    expect(await e.execute(target, query(), 1)).toEqual({ rows: [[1]], truncated: false, cached: false });
    expect((await e.execute(target, query(), 1)).cached).toBe(true);
    await e.execute(target, query('SELECT 1', [2]), 1);
    await e.execute(target, query(), 2);
    await e.execute(fakeTarget(() => rows([1]), 'source:1:other-settings').target, query(), 1);
    expect(calls.length).toBe(3);
    await new Promise((r) => setTimeout(r, 60));
    expect((await e.execute(target, query(), 1)).cached).toBe(false);
    // Every engine query is a read: the connector refuses writes for it. A query not marked as the compiler's own
    // text (no compiledText: this one was written here) is not sent as one.
    expect(calls[0].opts).toEqual({ limit: 2, timeoutMs: 1000, readOnly: true, compiledText: false });
    const own = { ...query(), sql: 'SELECT 2', compiledText: true };
    await e.execute(target, own, 1);
    expect(calls[calls.length - 1].opts).toMatchObject({ compiledText: true });
  });

  it('tells long queries apart as exactly as short ones (long keys are hashed, short ones are the text)', async () => {
    const e = engine();
    const { target, calls } = fakeTarget((sql) => rows([sql.length]));
    const long = `SELECT * FROM t WHERE id IN (${Array.from({ length: 400 }, (_, i) => `$${i + 1}`).join(', ')})`;
    const values = (last: unknown) => [...Array.from({ length: 399 }, (_, i) => i), last];
    for (const sql of ['SELECT 1', long])
      for (const last of [1, '1', 2, null]) {
        const first = await e.execute(target, query(sql, values(last)), 1);
        expect(first.cached).toBe(false);
        expect((await e.execute(target, query(sql, values(last)), 1)).cached).toBe(true);
      }
    // A number and the same digits as text, a changed last value, null: each its own entry, in both forms of key.
    expect(calls.length).toBe(8);
  });

  it('identical concurrent requests share one execution', async () => {
    const e = engine({ ttlMs: 0 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { target, calls } = fakeTarget(async () => {
      await gate;
      return rows([42]);
    });
    const all = Promise.all([1, 2, 3, 4, 5].map(() => e.execute(target, query(), 1)));
    release();
    const results = await all;
    expect(calls.length).toBe(1);
    expect(results.map((r) => r.rows)).toEqual(Array(5).fill([[42]]));
    expect(results.filter((r) => !r.cached).length).toBe(1);
    // with the TTL at 0 nothing is kept afterwards
    await e.execute(target, query(), 1);
    expect(calls.length).toBe(2);
  });

  it('driver errors and timeouts become 400 with the driver message, and are not cached', async () => {
    const e = engine();
    let fail = true;
    const { target, calls } = fakeTarget(() => {
      if (fail) throw new ConnectorError('relation "nope" does not exist', 'query', { code: '42P01' });
      return rows([1]);
    });
    const err = await e.execute(target, query(), 1).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).message).toBe(
      'Ошибка выполнения запроса в источнике данных: relation "nope" does not exist',
    );
    fail = false;
    expect((await e.execute(target, query(), 1)).rows).toEqual([[1]]);
    expect(calls.length).toBe(2);

    const slow = fakeTarget(() => {
      throw new ConnectorError('Превышено время выполнения запроса (1 с)', 'timeout');
    });
    const timeout = (await e.execute(slow.target, query('SELECT pg_sleep(5)'), 1).catch((x: unknown) => x)) as AppError;
    expect([timeout.status, timeout.message]).toEqual([400, 'Превышено время выполнения запроса (1 с)']);
    const odd = fakeTarget(() => {
      throw new TypeError('socket hang up');
    });
    expect(((await e.execute(odd.target, query('x'), 1).catch((x: unknown) => x)) as AppError).status).toBe(400);
  });
});

describe('result cache', () => {
  it('keeps within its byte and entry budget, least recently used out first', () => {
    const c = new ResultCache({ ttlMs: 60_000, maxBytes: 10_000, maxEntries: 3 });
    const r = (n: number) => ({ rows: Array.from({ length: n }, (_, i) => [i, 'x'.repeat(10)]), truncated: false });
    c.set('a', r(1));
    c.set('b', r(1));
    c.set('c', r(1));
    expect(c.get('a')).toBeDefined(); // a is now the most recent
    c.set('d', r(1));
    expect([c.get('a'), c.get('b'), c.get('c'), c.get('d')].map(Boolean)).toEqual([true, false, true, true]);
    c.set('huge', r(1000)); // more than a quarter of the budget: not kept
    expect(c.get('huge')).toBeUndefined();
    expect(c.totalBytes).toBeLessThanOrEqual(10_000);
    c.set('e', r(30));
    c.set('f', r(30));
    expect(c.size).toBeLessThanOrEqual(3);
    expect(c.totalBytes).toBeLessThanOrEqual(10_000);
  });

  it('keeps an entry for the TTL or the shorter time given, and nothing for none left', async () => {
    const c = new ResultCache({ ttlMs: 60_000, maxBytes: 10_000, maxEntries: 10 });
    const r = { rows: [[1]], truncated: false };
    c.set('long', r);
    c.set('short', r, 20);
    c.set('spent', r, 0);
    expect([c.get('long'), c.get('short'), c.get('spent')].map(Boolean)).toEqual([true, true, false]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect([c.get('long'), c.get('short')].map(Boolean)).toEqual([true, false]);
  });

  it('serves a key read over and over, and keeps it while others come and go', () => {
    const c = new ResultCache({ ttlMs: 60_000, maxBytes: 1_000_000, maxEntries: 100 });
    const hot = { rows: [['hot']], truncated: false };
    c.set('hot', hot);
    for (let i = 0; i < 10_000; i++) {
      expect(c.get('hot')).toBe(hot);
      c.set(`cold ${i}`, { rows: [[i]], truncated: false });
    }
    expect(c.size).toBe(100);
    expect(c.get('cold 9999')).toBeDefined();
    expect(c.get('cold 9900')).toBeUndefined();
  });
});
