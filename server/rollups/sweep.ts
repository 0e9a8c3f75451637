import type { AppDeps } from '../app/deps';
import { cacheSlot } from '../kernel/app-caches';
import { parseRollupKey } from './keys';
import { deleteExpiredRollupLoads, existingRollupIds, loadRowsByIds } from './store';

/*
 * The storage side of rollups, swept like extract loads (server/etl/load-sweep.ts): loads superseded longer than the
 * grace, uploads that never became current, and every load of a rollup (or dataset) deleted.
 */

/** How long a superseded load's object stays (a node may still be opening it); a slot so a test can shorten it. */
export const rollupLoadGrace = cacheSlot('rollups.loadGrace', () => ({ ms: 10 * 60_000 }));
const UNCOMMITTED_MIN_MS = 10 * 60_000;

export async function sweepRollupObjects(deps: AppDeps): Promise<void> {
  const graceMs = deps.caches.of(rollupLoadGrace).ms;
  const before = Date.now() - graceMs;
  const uncommittedBefore = Date.now() - Math.max(graceMs, UNCOMMITTED_MIN_MS);
  const objects: { key: string; rollupId: number; loadId: string; modified: Date }[] = [];
  for await (const o of deps.storage.list('rollups/')) {
    const parsed = parseRollupKey(o.key);
    if (parsed) objects.push({ key: o.key, rollupId: parsed.rollupId, loadId: parsed.loadId, modified: o.modified });
  }
  if (objects.length) {
    const alive = await existingRollupIds(deps.db, [...new Set(objects.map((o) => o.rollupId))]);
    const rows = await loadRowsByIds(
      deps.db,
      objects.map((o) => o.loadId),
    );
    for (const o of objects) {
      const row = rows.get(o.loadId);
      const expired = !alive.has(o.rollupId)
        ? true
        : row
          ? row.supersededAt !== null && row.supersededAt.getTime() < before
          : o.modified.getTime() < uncommittedBefore;
      if (!expired) continue;
      await deps.storage
        .delete(o.key)
        .catch((e: unknown) => console.error(`[rollups] ${o.key} not deleted:`, e instanceof Error ? e.message : e));
    }
  }
  await deleteExpiredRollupLoads(deps.db, graceMs);
}
