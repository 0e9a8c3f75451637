import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../../server/kernel/ttl-cache';

/** A load the test finishes by hand, counting how often it was started. */
function gate<V>() {
  let calls = 0;
  let release: (v: V) => void = () => {};
  let fail: (e: unknown) => void = () => {};
  const load = () => {
    calls++;
    return new Promise<V>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
  };
  return { load, calls: () => calls, release: (v: V) => release(v), fail: (e: unknown) => fail(e) };
}

describe('TtlCache.getOrLoad', () => {
  it('is single-flight: requests arriving during a load share it, and the value is then cached', async () => {
    const cache = new TtlCache<string, number>(60_000);
    const g = gate<number>();
    const all = Promise.all([1, 2, 3].map(() => cache.getOrLoad('k', g.load)));
    expect(g.calls()).toBe(1);
    g.release(42);
    expect(await all).toEqual([42, 42, 42]);
    expect(await cache.getOrLoad('k', g.load)).toBe(42);
    expect(g.calls()).toBe(1);
  });

  it('a failed load is not cached and the next request loads again', async () => {
    const cache = new TtlCache<string, number>(60_000);
    const g = gate<number>();
    const first = cache.getOrLoad('k', g.load);
    g.fail(new Error('down'));
    await expect(first).rejects.toThrow('down');
    const second = cache.getOrLoad('k', g.load);
    expect(g.calls()).toBe(2);
    g.release(7);
    expect(await second).toBe(7);
  });

  it('a load that started before a delete or clear answers its callers but is not stored', async () => {
    const cache = new TtlCache<string, number>(60_000);
    for (const drop of [(c: TtlCache<string, number>) => c.delete('k'), (c: TtlCache<string, number>) => c.clear()]) {
      const before = gate<number>();
      const stale = cache.getOrLoad('k', before.load);
      drop(cache);
      // A request after the change does not join the stale load.
      const after = gate<number>();
      const fresh = cache.getOrLoad('k', after.load);
      expect(after.calls()).toBe(1);
      after.release(2);
      expect(await fresh).toBe(2);
      before.release(1);
      expect(await stale).toBe(1);
      // The stale value was not stored over the fresh one.
      expect(cache.get('k')).toBe(2);
      cache.clear();
    }
  });

  it('expired entries are loaded again', async () => {
    const cache = new TtlCache<string, number>(-1);
    let n = 0;
    expect(await cache.getOrLoad('k', async () => ++n)).toBe(1);
    expect(await cache.getOrLoad('k', async () => ++n)).toBe(2);
  });

  it('getOrLoadNow answers a cached value as it is, and a miss as the same single-flight load', async () => {
    const cache = new TtlCache<string, number | null>(60_000);
    const g = gate<number | null>();
    const first = cache.getOrLoadNow('k', g.load);
    const second = cache.getOrLoadNow('k', g.load);
    expect(first).toBeInstanceOf(Promise);
    expect(g.calls()).toBe(1);
    g.release(null);
    expect(await Promise.all([first, second])).toEqual([null, null]);
    // null is a cached answer too (e.g. no such user), not a miss.
    expect(cache.getOrLoadNow('k', g.load)).toBeNull();
    expect(g.calls()).toBe(1);
  });
});
