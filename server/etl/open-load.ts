import { stat } from 'node:fs/promises';
import type { Connector } from '../../adapters/sources';
import type { AppDeps } from '../app/deps';
import { cacheSlot } from '../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';
import type { HeldCopy } from '../storage/local-copies';
import { StorageNotFoundError } from '../storage/object-storage';
import { legacyExtractFileOf } from './files';
import { currentLoadRow, extractKeyOf } from './loads';
import { evictEverywhere } from '../kernel/cache-changes';

/*
 * How a node reads the current load of an extract: the load id, cached per dataset for READ_DECISION_TTL_MS (dropped
 * at once on this node when it commits a new load, and on others when extractLoadChanged is broadcast), a local copy
 * of its object held through deps.localCopies (downloaded on a miss; on file:// the object itself), and a read-only
 * DuckDB connector keyed by dataset and load. When the current load changes, the previous load's connector and copy
 * are let go a little later (a request that picked them up just before finishes on them).
 */

/** The load of an older version's file (files.ts legacyExtractFileOf), read in place until the sweep stores it. */
const LEGACY_LOAD = 'legacy';

const currentLoads = cacheSlot('etl.currentLoads', () => new TtlCache<number, string | null>(READ_DECISION_TTL_MS));

/**
 * Forgets this node's idea of the dataset's current load, so its next read asks the database: called on commit of a
 * new load here, and to be called on every node when another node commits one (a cross-node eviction).
 */
export function extractLoadChanged(deps: AppDeps, datasetId: number): void {
  deps.caches.of(currentLoads).delete(datasetId);
}

/**
 * After a commit that changed the dataset's current load (a run's success, a legacy file stored, the dataset deleted
 * or back on its source): this node forgets its cached id at once and every other node when the NOTIFY reaches it
 * (server/cluster/cache-bus.ts: the dataset id dropped from this slot, as extractLoadChanged does); should the
 * message be lost, within READ_DECISION_TTL_MS.
 */
export function extractLoadCommitted(deps: AppDeps, datasetId: number): void {
  evictEverywhere(deps, currentLoads, datasetId);
}

/** The current load id (LEGACY_LOAD for an older version's file, null before a first synchronisation), cached. */
export function currentLoadOf(deps: AppDeps, datasetId: number): Promise<string | null> {
  return deps.caches.of(currentLoads).getOrLoad(datasetId, async () => {
    const row = await currentLoadRow(deps.db, datasetId);
    if (row) return row.id;
    const legacy = await stat(legacyExtractFileOf(deps.config.dataDir, datasetId)).catch(() => null);
    return legacy?.isFile() ? LEGACY_LOAD : null;
  });
}

/**
 * A local copy of the current load, read from the database (an incremental run copies it): null when none, or when
 * its object is gone (the run then loads in full, which is what the next read needs anyway).
 */
export async function holdCurrentLoad(deps: AppDeps, datasetId: number): Promise<HeldCopy | null> {
  const row = await currentLoadRow(deps.db, datasetId);
  if (row)
    return deps.localCopies.hold(extractKeyOf(datasetId, row.id)).catch((e: unknown) => {
      if (e instanceof StorageNotFoundError) return null;
      throw e;
    });
  const file = legacyExtractFileOf(deps.config.dataDir, datasetId);
  const legacy = await stat(file).catch(() => null);
  return legacy?.isFile() ? { file, release: () => undefined } : null;
}

interface OpenedLoad {
  datasetId: number;
  load: string;
  connectorKey: string;
  file: string;
  held: HeldCopy;
  lastUsed: number;
}

/** The loads this node has open, one per dataset, and the opens under way. */
const openLoads = cacheSlot('etl.openLoads', () => ({
  byDataset: new Map<number, OpenedLoad>(),
  opening: new Map<string, Promise<OpenedLoad>>(),
}));

/** A superseded load's connector and copy are let go this long after the switch. */
const RETIRE_AFTER_MS = 30_000;
/** A load nobody read for this long is closed (its copy may then be evicted): the next read opens it again. */
const IDLE_MS = 10 * 60_000;

const connectorOf = (deps: AppDeps, opened: OpenedLoad): Connector =>
  deps.connectors.get(opened.connectorKey, 'file', { file: { duckdb_path: opened.file, tables: [] } });

/**
 * The read-only connector of the dataset's load on this node: the copy is held (downloaded on a miss) for as long as
 * the load stays open. Throws StorageNotFoundError when the load's object is gone.
 */
export async function connectorOfLoad(deps: AppDeps, datasetId: number, load: string): Promise<Connector> {
  const reg = deps.caches.of(openLoads);
  const open = reg.byDataset.get(datasetId);
  if (open?.load === load) {
    open.lastUsed = Date.now();
    return connectorOf(deps, open);
  }
  const flight = `${datasetId}:${load}`;
  let pending = reg.opening.get(flight);
  if (!pending) {
    pending = openLoad(deps, datasetId, load).finally(() => reg.opening.delete(flight));
    reg.opening.set(flight, pending);
  }
  const opened = await pending;
  opened.lastUsed = Date.now();
  return connectorOf(deps, opened);
}

async function openLoad(deps: AppDeps, datasetId: number, load: string): Promise<OpenedLoad> {
  const held =
    load === LEGACY_LOAD
      ? { file: legacyExtractFileOf(deps.config.dataDir, datasetId), release: () => undefined }
      : await deps.localCopies.hold(extractKeyOf(datasetId, load));
  const reg = deps.caches.of(openLoads);
  const opened: OpenedLoad = {
    datasetId,
    load,
    connectorKey: `extract:${datasetId}:${load}`,
    file: held.file,
    held,
    lastUsed: Date.now(),
  };
  const previous = reg.byDataset.get(datasetId);
  reg.byDataset.set(datasetId, opened);
  if (previous) {
    const timer = setTimeout(() => void letGo(deps, previous, true), RETIRE_AFTER_MS);
    timer.unref();
  }
  closeIdle(deps);
  return opened;
}

/** Closes the loads nobody read for IDLE_MS, so their copies can leave the bounded cache. */
function closeIdle(deps: AppDeps): void {
  const reg = deps.caches.of(openLoads);
  const before = Date.now() - IDLE_MS;
  for (const [id, opened] of reg.byDataset) {
    if (opened.lastUsed >= before) continue;
    reg.byDataset.delete(id);
    void letGo(deps, opened, false);
  }
}

/**
 * Closes a load's connector (queries running on it finish first) and releases its copy: `superseded` (or gone) also
 * deletes the copy once nobody holds it; a current load closed for idleness keeps its copy in the bounded cache.
 */
async function letGo(deps: AppDeps, opened: OpenedLoad, superseded: boolean): Promise<void> {
  // The same load open again meanwhile (a newer entry with the same connector): only this entry's copy is released.
  const again = deps.caches.of(openLoads).byDataset.get(opened.datasetId);
  if (again?.connectorKey !== opened.connectorKey) await deps.connectors.release(opened.connectorKey).catch(() => {});
  opened.held.release();
  if (superseded && opened.load !== LEGACY_LOAD && again?.load !== opened.load)
    await deps.localCopies.forget(extractKeyOf(opened.datasetId, opened.load)).catch(() => undefined);
}

/** Closes at once what this node has open of the datasets' extracts (deleted, back on their source). */
export async function closeLoadsOf(deps: AppDeps, datasetIds: number[]): Promise<void> {
  const reg = deps.caches.of(openLoads);
  for (const id of datasetIds) {
    extractLoadChanged(deps, id);
    const opened = reg.byDataset.get(id);
    reg.byDataset.delete(id);
    if (opened) await letGo(deps, opened, true);
  }
}

/** The datasets whose extracts this node has open (the sweep closes those no longer materialised). */
export function openLoadDatasets(deps: AppDeps): number[] {
  return [...deps.caches.of(openLoads).byDataset.keys()];
}
