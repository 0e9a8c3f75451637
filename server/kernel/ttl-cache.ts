/**
 * A small per-process cache for hot authorisation reads (token status, user status, settings). Entries live a few
 * seconds so that several API nodes converge quickly; the node that makes a change drops its own entry at once.
 *
 * getOrLoad is single-flight: when an entry expires under load (200 viewers of one share link), the requests that
 * arrive while it reloads wait for that one load instead of each sending the same metadata query. A load that started
 * before a delete or clear of the cache is not stored (its value may predate the change the caller dropped it for).
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();
  private readonly loading = new Map<K, Promise<V>>();
  /** Moves on every delete and clear, so that a load started before one is not stored after it. */
  private generation = 0;
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.generation++;
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  async getOrLoad(key: K, load: () => Promise<V>): Promise<V> {
    return this.getOrLoadNow(key, load);
  }

  /**
   * getOrLoad, with a hit answered as it is rather than in a promise: for reads on every request (authentication,
   * widget data), where a cached answer should not cost a turn of the event loop.
   */
  getOrLoadNow(key: K, load: () => Promise<V>): V | Promise<V> {
    const hit = this.get(key);
    return hit !== undefined ? hit : this.load(key, load);
  }

  /** A miss: one load per key at a time, stored unless a delete or clear came while it ran. */
  private load(key: K, load: () => Promise<V>): Promise<V> {
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const loaded = load().then(
      (value) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        if (generation === this.generation) this.set(key, value);
        return value;
      },
      (e: unknown) => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
        throw e;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }
}
