import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { and, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { extractLoads } from '../../db/schema/extracts';
import type { AppDeps } from '../app/deps';
import { cacheSlot } from '../kernel/app-caches';

/*
 * Loads of an extract in the storage module (STORAGE_URL): each successful run's DuckDB file is stored once under a
 * key of its own, extracts/dataset-<id>/<load id>.duckdb, and never rewritten (objects are immutable), so a node's
 * local copy of a load is valid for as long as it exists. The load becomes current in the transaction that marks
 * its run succeeded (commitLoad); a superseded load stays readable for a grace period and is then deleted by the
 * sweep (load-sweep.ts). Rows: db/schema/extracts.ts extract_loads.
 */

/** Every object of the extracts of one dataset. */
export const extractPrefixOf = (datasetId: number) => `extracts/dataset-${datasetId}/`;

export const extractKeyOf = (datasetId: number, loadId: string) => `${extractPrefixOf(datasetId)}${loadId}.duckdb`;

const LOAD_KEY = /^extracts\/dataset-(\d+)\/([0-9a-f-]{36})\.duckdb$/;

/** The dataset and load a key of the extracts names, or null for any other key. */
export function parseExtractKey(key: string): { datasetId: number; loadId: string } | null {
  const m = LOAD_KEY.exec(key);
  return m ? { datasetId: Number(m[1]), loadId: m[2] } : null;
}

/** A load id: new for every stored file, never reused (a retried run stores under a new one). */
export const newLoadId = (): string => randomUUID();

/**
 * How long a superseded load's object is kept: a node that read the previous load id just before the switch may
 * still be opening it (its cached id lives READ_DECISION_TTL_MS), and a download under way must not lose its object.
 * A slot, so that a test can shorten it (deps.caches.replace).
 */
export const extractLoadGrace = cacheSlot('etl.loadGrace', () => ({ ms: 10 * 60_000 }));

/** The dataset's current load id, read from the database (uncached; readers use currentLoadOf in open-load.ts). */
export async function currentLoadRow(db: DbOrTx, datasetId: number): Promise<{ id: string; createdAt: Date } | null> {
  const [row] = await db
    .select({ id: extractLoads.id, createdAt: extractLoads.createdAt })
    .from(extractLoads)
    .where(and(eq(extractLoads.datasetId, datasetId), isNull(extractLoads.supersededAt)));
  return row ?? null;
}

/**
 * Makes the load current, in the caller's transaction (the one that marks its run succeeded): the previous current
 * load is marked superseded now, so its grace starts with the switch.
 */
export async function commitLoad(tx: DbOrTx, datasetId: number, loadId: string, runId: number | null): Promise<void> {
  await tx
    .update(extractLoads)
    .set({ supersededAt: sql`now()` })
    .where(and(eq(extractLoads.datasetId, datasetId), isNull(extractLoads.supersededAt)));
  await tx.insert(extractLoads).values({ id: loadId, datasetId, runId });
}

/**
 * Makes the load current only when the dataset has none (a legacy file moved into storage): false when a run's load
 * got there first.
 */
export async function commitFirstLoad(db: DbOrTx, datasetId: number, loadId: string): Promise<boolean> {
  const rows = await db.insert(extractLoads).values({ id: loadId, datasetId }).onConflictDoNothing().returning();
  return rows.length > 0;
}

/** Forgets every load of the datasets (switched back to live): their objects go with deletePrefix after commit. */
export async function dropLoadsOf(tx: DbOrTx, datasetIds: number[]): Promise<void> {
  if (datasetIds.length) await tx.delete(extractLoads).where(inArray(extractLoads.datasetId, datasetIds));
}

/** The rows of the given loads, by id. */
export async function loadRowsOf(db: DbOrTx, ids: string[]): Promise<Map<string, typeof extractLoads.$inferSelect>> {
  const out = new Map<string, typeof extractLoads.$inferSelect>();
  for (let at = 0; at < ids.length; at += 1_000) {
    const rows = await db
      .select()
      .from(extractLoads)
      .where(inArray(extractLoads.id, ids.slice(at, at + 1_000)));
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

/** Deletes the rows of loads superseded before the grace: their objects were deleted by the sweep just before. */
export async function deleteExpiredLoads(db: DbOrTx, graceMs: number): Promise<void> {
  await db
    .delete(extractLoads)
    .where(lt(extractLoads.supersededAt, sql`now() - make_interval(secs => ${graceMs / 1000})`));
}

/**
 * Stores a complete extract file as the load's object and removes the local file. On this node's disk (file://, the
 * one-node default) the file is moved into place, not copied: a load costs what a run cost before the storage
 * module. Elsewhere it is uploaded (multipart on S3).
 */
export async function storeLoad(deps: AppDeps, datasetId: number, loadId: string, file: string): Promise<void> {
  const key = extractKeyOf(datasetId, loadId);
  const own = deps.storage.localPath(key);
  try {
    if (own !== undefined) {
      await mkdir(path.dirname(own), { recursive: true });
      await rename(file, own).catch(async (e: NodeJS.ErrnoException) => {
        // Another file system (STORAGE_URL on its own mount): copied beside the target, then renamed in.
        if (e.code !== 'EXDEV') throw e;
        const tmp = `${own}.${loadId}.tmp`;
        await copyFile(file, tmp);
        await rename(tmp, own);
      });
    } else await deps.storage.putFile(key, file);
  } finally {
    await rm(file, { force: true });
  }
}
