import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { dataSourceMetadata, dataSources } from '../../db/schema/data-sources';
import type { AppDeps } from '../app/deps';
import type { CloneTarget, IdMap } from '../objects/id-map';
import { loadDataSourceRow, type DataSourceRow } from './connection';
import { copyFileSourceFiles, removeFileSourceFiles } from './file-storage';

/*
 * The data sources' writes and full reads: transaction first, no actor, no access checks (the services in
 * data-sources.ts and files.ts decide who may), never a transaction of their own, so that a deploy can compose
 * them with the other areas' stores in one transaction.
 */

export type SourceInsert = typeof dataSources.$inferInsert;
export type SourcePatch = Partial<Pick<SourceInsert, 'name' | 'settings' | 'secrets'>>;

export async function insertSource(tx: DbOrTx, values: SourceInsert): Promise<DataSourceRow> {
  const [row] = await tx.insert(dataSources).values(values).returning();
  return row;
}

/**
 * Every save moves updated_at, even one that changes nothing: pipelines compare by edit time. New settings may be
 * another database (or another file): the metadata read from the old one no longer holds and goes.
 */
export async function updateSource(tx: DbOrTx, id: number, patch: SourcePatch): Promise<DataSourceRow> {
  if (patch.settings !== undefined) await tx.delete(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, id));
  const [row] = await tx
    .update(dataSources)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(dataSources.id, id))
    .returning();
  return row ?? loadFullSource(tx, id); // no row: the source does not exist, and that answers its 404
}

/** The whole row, sealed secrets included. 404 when it does not exist. */
export function loadFullSource(tx: DbOrTx, id: number): Promise<DataSourceRow> {
  return loadDataSourceRow(tx, id);
}

/**
 * The folders a run of clones copied for file sources. Files are not in the transaction: when it fails, the caller
 * calls discard() so that no copy is left behind without its row.
 */
export interface SourceFileCopies {
  copy(fromUuid: string, toUuid: string, settings: Record<string, unknown>): Promise<Record<string, unknown>>;
  discard(): Promise<void>;
}

export function sourceFileCopies(deps: AppDeps): SourceFileCopies {
  const made: string[] = [];
  return {
    async copy(fromUuid, toUuid, settings) {
      made.push(toUuid); // before the copy: a copy that fails half-way is removed too
      return copyFileSourceFiles(deps, fromUuid, toUuid, settings);
    },
    async discard() {
      await Promise.all(made.splice(0).map((uuid) => removeFileSourceFiles(deps, uuid)));
    },
  };
}

/**
 * A copy of the source in `target` with the same settings and secrets; records old -> new in `idMap` and answers the
 * new id. A file source takes its file along: the copy has its own folder, so either can be replaced or deleted
 * alone.
 */
export async function cloneSource(
  tx: Tx,
  id: number,
  target: CloneTarget,
  idMap: IdMap,
  files: SourceFileCopies,
): Promise<number> {
  const row = await loadFullSource(tx, id);
  const uuid = randomUUID();
  let settings = row.settings as Record<string, unknown>;
  if (row.type === 'file') settings = await files.copy(row.uuid, uuid, settings);
  const copy = await insertSource(tx, {
    uuid,
    name: target.name ?? row.name,
    type: row.type,
    workspaceId: target.workspaceId,
    authorId: target.authorId,
    settings,
    secrets: row.secrets,
  });
  idMap.dataSources.set(id, copy.id);
  return copy.id;
}

/** Removes the folder of a file source that no row names any more (a deploy gave the copy a fresh folder). */
export const removeSourceFolder = (deps: AppDeps, uuid: string): Promise<void> => removeFileSourceFiles(deps, uuid);
