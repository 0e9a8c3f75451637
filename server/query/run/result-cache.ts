import { LRUCache } from 'lru-cache';

/*
 * Results of compiled queries, kept a short time (TTL) within a memory budget. Keys include the data version (see
 * engine.ts), so a schema save or a changed connection never serves old rows; the TTL bounds how stale data of an
 * unchanged source may be. Least recently used entries go first when the budget is exceeded.
 */

export interface CachedResult {
  rows: unknown[][];
  truncated: boolean;
}

export interface ResultCacheOptions {
  ttlMs: number;
  maxBytes: number;
  maxEntries: number;
}

/*
 * Recency is lru-cache's linked list, not a Map's insertion order: moving a hit to a Map's end (delete, then set
 * again) leaves the deleted entry in V8's hash chain until the next rehash, so a key read over and over (one widget
 * with one body, every viewer) made every later lookup of it slower: 2-30 us per hit on a 2,000-entry cache
 * (measured), and evicting the oldest walked the holes the same way.
 */
export class ResultCache {
  private readonly entries: LRUCache<string, CachedResult>;

  constructor(private readonly opts: ResultCacheOptions) {
    this.entries = new LRUCache<string, CachedResult>({
      max: opts.maxEntries,
      maxSize: opts.maxBytes,
      // One result may take at most a quarter of the budget, so a single huge page cannot empty the cache.
      maxEntrySize: opts.maxBytes / 4,
      sizeCalculation: (value) => estimateBytes(value.rows),
    });
  }

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.entries.calculatedSize;
  }

  get(key: string): CachedResult | undefined {
    return this.entries.get(key);
  }

  /** Keeps the result for the TTL, or for `ttlMs` when shorter (what remains of a shared entry's TTL). */
  set(key: string, value: CachedResult, ttlMs = this.opts.ttlMs): void {
    ttlMs = Math.min(ttlMs, this.opts.ttlMs);
    // lru-cache reads a TTL of 0 as "for ever".
    if (ttlMs <= 0) return;
    this.entries.set(key, value, { ttl: ttlMs });
  }

  clear(): void {
    this.entries.clear();
  }
}

/** A cheap upper-ish estimate of the memory of a result: a fixed cost per value plus the text of strings. */
export function estimateBytes(rows: unknown[][]): number {
  // Indexed loops: lru-cache calls this on every store (every miss), where for-of's iterators were a visible share of
  // a miss's allocations in a bench:load heap profile.
  let bytes = 64;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    bytes += 32 + row.length * 16;
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      if (typeof v === 'string') bytes += 2 * v.length;
    }
  }
  return bytes;
}
