import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { dataSourceMetadata, dataSources } from '../../db/schema/data-sources';
import type { AppDeps } from '../app/deps';
import { COPY_MAP, type CopyTarget } from '../objects/copy-map';
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
 * The folders a run of copies copied for file sources. Files are not in the transaction: when it fails, the caller
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

export interface SourceCopyOptions {
  files: SourceFileCopies;
  /**
   * Connection settings that replace the originals' (a receiving stage's substitution rules): SQL of (source_uuid uuid,
   * type text, settings jsonb, secrets text) rows, matched on the original's uuid and type. A file source never takes
   * one: its copy carries its own file.
   */
  overrides?: SQL;
}

export interface SourceCopyResult {
  /** With `overrides`: names of the copied non-file sources none matched (they keep the original's connection). */
  withoutOverride: string[];
  /** Folders of updated file copies that their rows no longer name: the caller removes them after commit. */
  replacedFolders: string[];
}

type FileSourceRow = { id: number; uuid: string; settings: Record<string, unknown>; copy_uuid: string | null };

/**
 * Copies every data source of the copy map (server/objects/copy-map.ts) into `target`, batched: one upsert writes
 * each copy (created under its drawn id, or an earlier copy updated in place) with the original's settings and sealed
 * secrets, or an override's. A file source takes its file along instead: the copy gets a fresh folder (and, when
 * updated, a fresh uuid, so its old folder can go after commit and nothing is lost if the transaction fails). An
 * updated copy may point at another database now: what was read from the old one goes.
 */
export async function copySources(tx: Tx, target: CopyTarget, opts: SourceCopyOptions): Promise<SourceCopyResult> {
  const fileRows = await tx.execute<FileSourceRow>(sql`
    select o.id, o.uuid, o.settings, c.uuid as copy_uuid
    from ${COPY_MAP} m join data_sources o on o.id = m.old_id
    left join data_sources c on c.id = m.new_id and not m.created
    where m.kind = 'data_source' and o.type = 'file'`);
  const fileCopies: { old_id: number; uuid: string; settings: Record<string, unknown> }[] = [];
  for (const f of fileRows.rows) {
    const uuid = randomUUID();
    fileCopies.push({ old_id: f.id, uuid, settings: await opts.files.copy(f.uuid, uuid, f.settings) });
  }
  const overrides = sql`left join (${
    opts.overrides ??
    sql`select null::uuid as source_uuid, null::text as type, null::jsonb as settings, null::text as secrets`
  }) r on r.source_uuid = o.uuid and r.type = o.type`;
  await tx.execute(sql`
    insert into data_sources (id, uuid, name, type, workspace_id, author_id, settings, secrets)
    select m.new_id, coalesce(f.uuid, gen_random_uuid()), m.name, o.type, ${target.workspaceId}::int,
      ${target.authorId}::int, coalesce(f.settings, case when r.source_uuid is not null then r.settings else o.settings end),
      case when r.source_uuid is not null and f.old_id is null then r.secrets else o.secrets end
    from ${COPY_MAP} m join data_sources o on o.id = m.old_id
    ${overrides}
    left join jsonb_to_recordset(${JSON.stringify(fileCopies)}::jsonb) f(old_id int, uuid uuid, settings jsonb)
      on f.old_id = o.id
    where m.kind = 'data_source'
    on conflict (id) do update set name = excluded.name, type = excluded.type, settings = excluded.settings,
      secrets = excluded.secrets, updated_at = now(),
      uuid = case when excluded.type = 'file' then excluded.uuid else data_sources.uuid end`);
  await tx.execute(sql`delete from data_source_metadata
    where data_source_id in (select new_id from ${COPY_MAP} where kind = 'data_source' and not created)`);
  const withoutOverride = opts.overrides
    ? await tx.execute<{ name: string }>(sql`
        select o.name from ${COPY_MAP} m join data_sources o on o.id = m.old_id ${overrides}
        where m.kind = 'data_source' and o.type <> 'file' and r.source_uuid is null order by o.id`)
    : { rows: [] };
  return {
    withoutOverride: withoutOverride.rows.map((r) => r.name),
    replacedFolders: fileRows.rows.flatMap((f) => (f.copy_uuid ? [f.copy_uuid] : [])),
  };
}

/** Removes the folder of a file source that no row names any more (a deploy gave the copy a fresh folder). */
export const removeSourceFolder = (deps: AppDeps, uuid: string): Promise<void> => removeFileSourceFiles(deps, uuid);

/**
 * Moves the given sources of workspace `from` to `to`, keeping their ids (POST /api/workspaces/{id}/transfer); answers
 * how many moved: one no longer in `from` stays where it is.
 */
export async function moveSourcesToWorkspace(tx: DbOrTx, ids: number[], from: number, to: number): Promise<number> {
  if (ids.length === 0) return 0;
  const moved = await tx
    .update(dataSources)
    .set({ workspaceId: to })
    .where(and(eq(dataSources.workspaceId, from), inArray(dataSources.id, ids)))
    .returning({ id: dataSources.id });
  return moved.length;
}
