import type { AppDeps } from '../app/deps';
import { loadDatasetRow } from '../datasets/load-model';
import { currentLoadOf } from '../etl/open-load';
import { cacheSlot } from '../kernel/app-caches';
import { evictEverywhere } from '../kernel/cache-changes';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';
import type { HeldCopy } from '../storage/local-copies';
import { StorageNotFoundError } from '../storage/object-storage';
import { AppError } from '../kernel/errors';
import { definitionOf } from './definitions';
import { rollupKeyOf } from './keys';
import { MSG } from './messages';
import { currentLoadsOf, rollupsOfDataset } from './store';
import type { OpenedRollup, ServedRollup } from './types';

/*
 * What the read side (server/query/rollups) may answer from: the dataset's enabled rollups with a current load that
 * is FRESH, built from the dataset's current version and, for a materialised dataset, from the extract's current load.
 * The definitions and current loads are cached per dataset (with the version they were read for) for
 * READ_DECISION_TTL_MS, dropped on every node through the cache bus when a build lands or a definition changes
 * (rollupsChanged); the extract's current load comes from its own cache (evicted the same way when a run commits).
 */

interface DatasetRollups {
  /** The dataset's version and mode when this was read: an entry of another version is read again. */
  version: number;
  live: boolean;
  rollups: ServedRollup[];
}

const served = cacheSlot('rollups.served', () => new TtlCache<number, DatasetRollups>(READ_DECISION_TTL_MS));

/** After a commit that changed a dataset's rollups (a build landed, a definition saved or deleted): every node forgets. */
export function rollupsChanged(deps: AppDeps, datasetId: number): void {
  evictEverywhere(deps, served, datasetId);
}

/** Every rollup of the dataset with its current load (fresh or not) and the dataset's version and mode, cached. */
function datasetRollups(deps: AppDeps, datasetId: number): Promise<DatasetRollups> {
  return deps.caches.of(served).getOrLoad(datasetId, async () => {
    const dataset = await loadDatasetRow(deps.db, datasetId).catch(() => null);
    if (!dataset) return { version: -1, live: true, rollups: [] };
    const rows = await rollupsOfDataset(deps.db, datasetId);
    const loads = await currentLoadsOf(
      deps.db,
      rows.map((r) => r.id),
    );
    const rollups: ServedRollup[] = [];
    for (const row of rows) {
      const load = loads.get(row.id);
      if (!load) continue;
      rollups.push({
        definition: definitionOf(row),
        load: {
          id: load.id,
          datasetVersion: load.datasetVersion,
          extractLoadId: load.extractLoadId,
          rows: load.rows,
          bytes: load.bytes,
          builtAt: load.builtAt,
        },
      });
    }
    return { version: dataset.version, live: dataset.live, rollups };
  });
}

/** Whether a built rollup answers for the dataset as it is now. */
export function isFresh(
  rollup: ServedRollup,
  datasetVersion: number,
  live: boolean,
  extractLoad: string | null,
): boolean {
  if (rollup.load.datasetVersion !== datasetVersion) return false;
  return live || (extractLoad !== null && rollup.load.extractLoadId === extractLoad);
}

/**
 * Whether this node already knows, without waiting, that the dataset at this version has no enabled rollup: its
 * cached entry says so. Widget data asks first, so a dataset without rollups (most) takes no await for them.
 */
export function knownWithoutRollups(deps: AppDeps, datasetId: number, datasetVersion: number): boolean {
  const entry = deps.caches.of(served).get(datasetId);
  return entry !== undefined && entry.version === datasetVersion && !entry.rollups.some((r) => r.definition.enabled);
}

/**
 * The rollups a read of the dataset at `datasetVersion` may be answered from: enabled, built, fresh. A materialised
 * dataset's rollups must be built from its current extract load.
 */
export async function servableRollups(
  deps: AppDeps,
  datasetId: number,
  datasetVersion: number,
): Promise<ServedRollup[]> {
  let entry = await datasetRollups(deps, datasetId);
  if (entry.version !== datasetVersion) {
    // Read before the version moved (or the caller's is older): asked again once; still other: nothing is fresh.
    deps.caches.of(served).delete(datasetId);
    entry = await datasetRollups(deps, datasetId);
    if (entry.version !== datasetVersion) return [];
  }
  const all = entry.rollups.filter((r) => r.definition.enabled);
  if (!all.length) return [];
  const extractLoad = entry.live ? null : await currentLoadOf(deps, datasetId);
  return all.filter((r) => isFresh(r, datasetVersion, entry.live, extractLoad));
}

// ---- opening a load on this node ----

interface OpenedLoad {
  rollupId: number;
  loadId: string;
  connectorKey: string;
  held: HeldCopy;
  lastUsed: number;
}

const openLoads = cacheSlot('rollups.openLoads', () => ({
  byRollup: new Map<number, OpenedLoad>(),
  opening: new Map<string, Promise<OpenedLoad>>(),
}));

const RETIRE_AFTER_MS = 30_000;
const IDLE_MS = 10 * 60_000;

const keyOf = (s: ServedRollup) => rollupKeyOf(s.definition.datasetId, s.definition.id, s.load.id);

/**
 * The read-only DuckDB connector of the rollup's load on this node (its copy held while open, downloaded on a miss)
 * and the result-cache key `rollup:<rollupId>:<loadId>`. A load superseded on this node is let go a little later.
 */
export async function openRollup(deps: AppDeps, s: ServedRollup): Promise<OpenedRollup> {
  const reg = deps.caches.of(openLoads);
  const dataKey = `rollup:${s.definition.id}:${s.load.id}`;
  let opened = reg.byRollup.get(s.definition.id);
  if (opened?.loadId !== s.load.id) {
    let pending = reg.opening.get(dataKey);
    if (!pending) {
      pending = openLoad(deps, s).finally(() => reg.opening.delete(dataKey));
      reg.opening.set(dataKey, pending);
    }
    opened = await pending;
  }
  opened.lastUsed = Date.now();
  const connector = deps.connectors.get(opened.connectorKey, 'file', {
    file: { duckdb_path: opened.held.file, tables: [] },
  });
  return { connector, dataKey };
}

async function openLoad(deps: AppDeps, s: ServedRollup): Promise<OpenedLoad> {
  let held: HeldCopy;
  try {
    held = await deps.localCopies.hold(keyOf(s));
  } catch (e) {
    if (e instanceof StorageNotFoundError) rollupsChanged(deps, s.definition.datasetId);
    throw new AppError('service_unavailable', MSG.storageUnavailable, { cause: e });
  }
  const reg = deps.caches.of(openLoads);
  const opened: OpenedLoad = {
    rollupId: s.definition.id,
    loadId: s.load.id,
    connectorKey: `rollup:${s.definition.id}:${s.load.id}`,
    held,
    lastUsed: Date.now(),
  };
  const previous = reg.byRollup.get(s.definition.id);
  reg.byRollup.set(s.definition.id, opened);
  if (previous && previous.loadId !== opened.loadId) {
    const timer = setTimeout(() => void letGo(deps, previous), RETIRE_AFTER_MS);
    timer.unref();
  }
  const before = Date.now() - IDLE_MS;
  for (const [id, o] of reg.byRollup) {
    if (o.lastUsed >= before || o === opened) continue;
    reg.byRollup.delete(id);
    void letGo(deps, o);
  }
  return opened;
}

async function letGo(deps: AppDeps, opened: OpenedLoad): Promise<void> {
  const again = deps.caches.of(openLoads).byRollup.get(opened.rollupId);
  if (again?.connectorKey !== opened.connectorKey) await deps.connectors.release(opened.connectorKey).catch(() => {});
  opened.held.release();
}
