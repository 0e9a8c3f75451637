import type { AppCaches } from './app-caches';

/*
 * The read epoch: a counter in AppDeps.caches that every write which can change who reads what bumps after its
 * commit. Cached read decisions carry it in their keys (see server/app/deps.ts), so this process never serves one
 * older than its last such write, and the other nodes bump theirs when the NOTIFY sent from here arrives
 * (server/kernel/cache-changes.ts, carried by server/cluster/cache-bus.ts).
 */

/** Forget every cached read decision of every node: call after committing a write that changes access or data. */
export function readCachesChanged(deps: { caches: Pick<AppCaches, 'readEpoch' | 'publish'> }): void {
  deps.caches.readEpoch.value++;
  deps.caches.publish({ kind: 'epoch' });
}

/** How long another node may still serve a read decision this node's write made stale when its NOTIFY is lost. */
export const READ_DECISION_TTL_MS = 2_000;
