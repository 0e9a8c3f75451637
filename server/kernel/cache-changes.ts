import type { AppCaches, CacheChange, CacheSlot } from './app-caches';

/*
 * Cache coherence across nodes (docs/cluster.md): every write that bumps the read epoch or drops a cached key tells
 * the other nodes through PostgreSQL NOTIFY on the metadata database, and each node keeps one LISTEN connection of
 * its own (not from the pool) on which it applies what it hears at once (the transport: server/cluster/cache-bus.ts,
 * which the kernel does not import; areas call evictEverywhere and settingChangedEverywhere below). While that connection is down a node
 * cannot know what it missed, so it forgets every read decision it holds when the connection drops and again when it
 * is back; the caches' TTLs stay as a backstop.
 */

/** A slot's cache as the bus sees it: the receiver drops a key or everything. */
interface Evictable {
  delete(key: unknown): unknown;
  clear(): void;
}

function isEvictable(value: unknown): value is Evictable {
  const v = value as Partial<Evictable> | null;
  return typeof v?.delete === 'function' && typeof v.clear === 'function';
}

/** Applies another node's change to this node's caches. A slot never made here holds nothing to drop. */
export function applyCacheChange(caches: AppCaches, change: CacheChange): void {
  switch (change.kind) {
    case 'epoch':
      caches.readEpoch.value++;
      return;
    case 'settings':
      caches.settings.delete(change.key);
      return;
    case 'evict': {
      const value = caches.madeNamed(change.slot);
      if (isEvictable(value)) value.delete(change.key);
      return;
    }
    case 'clear': {
      const value = caches.madeNamed(change.slot);
      if (isEvictable(value)) value.clear();
      return;
    }
  }
}

/** Forgets every read decision of this node: the epoch moves, the settings and every made cache slot are emptied. */
export function clearAllReadCaches(caches: AppCaches): void {
  caches.readEpoch.value++;
  caches.settings.clear();
  for (const value of caches.madeValues()) if (isEvictable(value)) value.clear();
}

/** The slot's key dropped on this node now and on every other node once the message arrives. */
export function evictEverywhere<K extends string | number>(
  deps: { caches: AppCaches },
  slot: CacheSlot<{ delete(key: K): unknown }>,
  key: K,
): void {
  deps.caches.of(slot).delete(key);
  deps.caches.publish({ kind: 'evict', slot: slot.name, key });
}

/** A settings row dropped from the settings cache here and on every other node. */
export function settingChangedEverywhere(deps: { caches: AppCaches }, key: string): void {
  deps.caches.settings.delete(key);
  deps.caches.publish({ kind: 'settings', key });
}
