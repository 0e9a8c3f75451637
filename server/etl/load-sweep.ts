import type { AppDeps } from '../app/deps';
import { materialisedAmong } from '../datasets/views';
import {
  commitFirstLoad,
  currentLoadRow,
  deleteExpiredLoads,
  extractKeyOf,
  extractLoadGrace,
  loadRowsOf,
  newLoadId,
  parseExtractKey,
} from './loads';
import { extractLoadCommitted } from './open-load';

/*
 * The storage side of the extract sweep (server/etl/run-job.ts sweepLostRuns, every minute on the nodes that run
 * jobs; safe on several at once). Objects, not only local files, are deleted: loads superseded longer than the grace,
 * uploads that never became current (a run that failed or died between its upload and its commit), and every load of
 * a dataset deleted or back on its source. A node that still holds a local copy of a deleted load keeps reading it
 * until it lets it go (open-load.ts).
 */

const EXTRACTS = 'extracts/';
/**
 * An object without a row is deleted only this much later at least, whatever the grace: a run's upload becomes
 * current milliseconds after it completes, and a multipart upload's time is its start.
 */
const UNCOMMITTED_MIN_MS = 10 * 60_000;

export async function sweepExtractObjects(deps: AppDeps): Promise<void> {
  const graceMs = deps.caches.of(extractLoadGrace).ms;
  const before = Date.now() - graceMs;
  const uncommittedBefore = Date.now() - Math.max(graceMs, UNCOMMITTED_MIN_MS);
  const objects: { key: string; datasetId: number; loadId: string; modified: Date }[] = [];
  for await (const o of deps.storage.list(EXTRACTS)) {
    const parsed = parseExtractKey(o.key);
    if (parsed) objects.push({ key: o.key, ...parsed, modified: o.modified });
  }
  const served = await materialisedAmong(deps.db, [...new Set(objects.map((o) => o.datasetId))]);
  const rows = await loadRowsOf(
    deps.db,
    objects.map((o) => o.loadId),
  );
  for (const o of objects) {
    const row = rows.get(o.loadId);
    const expired = !served.has(o.datasetId)
      ? true
      : row
        ? row.supersededAt !== null && row.supersededAt.getTime() < before
        : // No row: an upload whose commit never came, or one under way (hence the grace).
          o.modified.getTime() < uncommittedBefore;
    if (!expired) continue;
    // One that fails (storage briefly unreachable) is retried by the next sweep: its row goes, its age stays.
    await deps.storage
      .delete(o.key)
      .catch((e: unknown) => console.error(`[extracts] ${o.key} not deleted:`, e instanceof Error ? e.message : e));
  }
  await deleteExpiredLoads(deps.db, graceMs);
}

/**
 * An older version's extract file of a materialised dataset (no load id): stored as the dataset's first load when it
 * has none, so every node reads it; true once the dataset's current load is older than the grace and the file can go
 * (readers of this node moved to the load meanwhile). A run's load committed first wins: the copy is then deleted.
 */
export async function sweepLegacyExtract(deps: AppDeps, datasetId: number, file: string): Promise<boolean> {
  const current = await currentLoadRow(deps.db, datasetId);
  if (current) return current.createdAt.getTime() < Date.now() - deps.caches.of(extractLoadGrace).ms;
  const loadId = newLoadId();
  const key = extractKeyOf(datasetId, loadId);
  try {
    // Copied, not moved: this node's readers keep the file open until they switch to the load.
    await deps.storage.putFile(key, file);
    if (await commitFirstLoad(deps.db, datasetId, loadId)) extractLoadCommitted(deps, datasetId);
    else await deps.storage.delete(key);
  } catch (e) {
    console.error(`[extracts] extract of dataset ${datasetId} not stored:`, e instanceof Error ? e.message : e);
    await deps.storage.delete(key).catch(() => undefined);
  }
  return false;
}
