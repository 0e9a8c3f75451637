/*
 * Results of compiled queries, kept a short time (TTL) within a memory budget. Keys include the data version (see
 * engine.ts), so a schema save or a changed connection never serves old rows; the TTL bounds how stale data of an
 * unchanged source may be. Least recently used entries go first when the budget is exceeded.
 */

export interface CachedResult {
  rows: unknown[][];
  truncated: boolean;
}

interface Entry {
  value: CachedResult;
  bytes: number;
  expires: number;
}

export interface ResultCacheOptions {
  ttlMs: number;
  maxBytes: number;
  maxEntries: number;
}

export class ResultCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly opts: ResultCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get(key: string, now = Date.now()): CachedResult | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= now) {
      this.remove(key, e);
      return undefined;
    }
    // Map order is recency order: move the hit to the end.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** Keeps the result for the TTL, or for `ttlMs` when shorter (what remains of a shared entry's TTL). */
  set(key: string, value: CachedResult, now = Date.now(), ttlMs = this.opts.ttlMs): void {
    ttlMs = Math.min(ttlMs, this.opts.ttlMs);
    if (ttlMs <= 0) return;
    const bytes = estimateBytes(value.rows);
    // One result may take at most a quarter of the budget, so a single huge page cannot empty the cache.
    if (bytes > this.opts.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    this.entries.set(key, { value, bytes, expires: now + ttlMs });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.opts.maxBytes && this.entries.size <= this.opts.maxEntries) break;
      this.remove(k, e);
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}

/** A cheap upper-ish estimate of the memory of a result: a fixed cost per value plus the text of strings. */
export function estimateBytes(rows: unknown[][]): number {
  let bytes = 64;
  for (const row of rows) {
    bytes += 32 + row.length * 16;
    for (const v of row) if (typeof v === 'string') bytes += 2 * v.length;
  }
  return bytes;
}
