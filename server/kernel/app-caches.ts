import { TtlCache } from './ttl-cache';

/*
 * The caches of one app (one set of AppDeps). Each area owns its caches: it declares a slot with the cache's type
 * and how to make it (`cacheSlot`), and reaches it through `deps.caches.of(slot)`, where it is made on first use. So
 * the composition (server/app) never names an area's types, and no area imports another's caches.
 */

/** One area's cache (or per-app registry) declared once at module level; its value lives in each app's AppCaches. */
export interface CacheSlot<T> {
  /** For logs and tests. */
  readonly name: string;
  readonly create: () => T;
}

export function cacheSlot<T>(name: string, create: () => T): CacheSlot<T> {
  return { name, create };
}

/**
 * What one node tells the others (server/kernel/cache-changes.ts): bump the read epoch, drop a slot's key or all of
 * it, drop a setting. Keys travel as JSON, so a slot broadcast by key uses strings or numbers.
 */
export type CacheChange =
  | { kind: 'epoch' }
  | { kind: 'evict'; slot: string; key: string | number }
  | { kind: 'clear'; slot: string }
  | { kind: 'settings'; key: string };

export class AppCaches {
  /**
   * Bumped (after commit) by every write that can change who reads what or what a read needs: memberships, roles,
   * group members, workspaces, sources, dataset and widget saves, rules (server/kernel/read-epoch.ts). Keys of cached
   * read decisions carry it, so this process never serves a decision older than its last such write; other nodes
   * bump theirs when the bump's NOTIFY arrives (server/cluster/cache-bus.ts), the caches' TTL as a backstop.
   */
  readonly readEpoch = { value: 0 };
  /** Installation settings rows by key (PUT /api/settings and the other admin switches drop their key on save). */
  readonly settings = new TtlCache<string, unknown>(2_000);
  private readonly values = new Map<CacheSlot<unknown>, unknown>();
  /** Where a change made here goes to the other nodes (the app's CacheBus; nowhere until one is attached). */
  private sender: ((change: CacheChange) => void) | undefined;

  /** The app's cache bus sends what publish is given. */
  attach(sender: (change: CacheChange) => void): void {
    this.sender = sender;
  }

  /** Tells the other nodes of a change this node already applied to itself (sent after this tick). */
  publish(change: CacheChange): void {
    this.sender?.(change);
  }

  /** The value of the slot of that name if it was made in this app (a change heard from another node). */
  madeNamed(name: string): unknown {
    for (const [slot, value] of this.values) if (slot.name === name) return value;
    return undefined;
  }

  /** Every value made so far (the bus clears the caches among them when its connection drops). */
  madeValues(): unknown[] {
    return [...this.values.values()];
  }

  /** The slot's cache in this app, made on first use. */
  of<T>(slot: CacheSlot<T>): T {
    let value = this.values.get(slot) as T | undefined;
    if (value === undefined) {
      value = slot.create();
      this.values.set(slot, value);
    }
    return value;
  }

  /** The names of the slots made so far in this app (tests and logs). */
  made(): string[] {
    return [...this.values.keys()].map((slot) => slot.name);
  }

  /** Puts another value in the slot (a test or a benchmark configuring the query engine). */
  replace<T>(slot: CacheSlot<T>, value: T): T {
    this.values.set(slot, value);
    return value;
  }
}
