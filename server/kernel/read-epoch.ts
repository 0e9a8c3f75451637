/*
 * The read epoch: a counter in AppDeps.caches that every write which can change who reads what bumps after its
 * commit. Cached read decisions carry it in their keys (see server/app/deps.ts), so this process never serves one
 * older than its last such write.
 */

/** Forget every cached read decision of this process: call after committing a write that changes access or data. */
export function readCachesChanged(deps: { caches: { readEpoch: { value: number } } }): void {
  deps.caches.readEpoch.value++;
}

/** How long another node may still serve a read decision this node's write made stale. */
export const READ_DECISION_TTL_MS = 2_000;
