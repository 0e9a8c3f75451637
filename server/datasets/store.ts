import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { datasetSources, datasets } from '../../db/schema/datasets';
import { analyzeCopyMap, COPY_MAP, ints, type CopyTarget } from '../objects/copy-map';
import type { DatasetModel } from '../query/compile/dataset-model';
import { copyDatasetRules } from '../access/dataset-security/rule-stores';
import {
  clearCopyDependents,
  copyDatasetDependents,
  deleteOmitted,
  mapDatasetChildren,
  upsertSchema,
} from './copy-schema';
import { loadDatasetRow, modelOfRow, type DatasetRow } from './load-model';
import { touchDataset } from './schema-store';

/*
 * The datasets' writes and full reads: transaction first, no actor, no access checks (the services in datasets.ts
 * and schema-store.ts decide who may), never a transaction of their own, so that a deploy can compose them with the
 * other areas' stores in one transaction. The schema itself is written by schema-store.ts (writeSchema).
 */

export type DatasetInsert = typeof datasets.$inferInsert;

export interface DatasetPatch {
  name?: string;
  description?: string;
  live?: boolean;
  /** The whole list in order; sources left out are detached (the caller checks no object still uses them). */
  dataSourceIds?: number[];
}

const unique = (ids: number[]) => [...new Set(ids)];

/** A new dataset with its sources in the given order (an empty schema). */
export async function insertDataset(
  tx: DbOrTx,
  values: DatasetInsert,
  dataSourceIds: number[] = [],
): Promise<DatasetRow> {
  const [row] = await tx.insert(datasets).values(values).returning();
  const ids = unique(dataSourceIds);
  if (ids.length)
    await tx
      .insert(datasetSources)
      .values(ids.map((dataSourceId, position) => ({ datasetId: row.id, dataSourceId, position })));
  return row;
}

/** Settings and the source list; the schema stays. Moves the edit time and version, as every save of a dataset does. */
export async function updateDataset(tx: DbOrTx, id: number, patch: DatasetPatch): Promise<DatasetRow> {
  if (patch.dataSourceIds !== undefined) await setDatasetSources(tx, id, unique(patch.dataSourceIds));
  return touchDataset(tx, id, {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.live !== undefined && { live: patch.live }),
  });
}

async function setDatasetSources(tx: DbOrTx, id: number, next: number[]): Promise<void> {
  await tx
    .delete(datasetSources)
    .where(
      and(eq(datasetSources.datasetId, id), next.length ? notInArray(datasetSources.dataSourceId, next) : undefined),
    );
  for (const [position, dataSourceId] of next.entries()) {
    await tx
      .insert(datasetSources)
      .values({ datasetId: id, dataSourceId, position })
      .onConflictDoUpdate({ target: [datasetSources.datasetId, datasetSources.dataSourceId], set: { position } });
  }
}

/** The row and the whole schema (objects, fields, relations, hierarchies, filters, parameters, sources). 404 if missing. */
export async function loadFullDataset(tx: DbOrTx, id: number): Promise<{ row: DatasetRow; model: DatasetModel }> {
  const row = await loadDatasetRow(tx, id);
  return { row, model: await modelOfRow(tx, row) };
}

/** The datasets among `ids` that are in the workspace, with their sources (a deploy brings a dataset's sources along). */
export async function datasetsWithSources(
  tx: DbOrTx,
  workspaceId: number,
  ids: number[],
): Promise<{ id: number; dataSourceIds: number[] }[]> {
  if (!ids.length) return [];
  const res = await tx.execute<{ id: number; source_ids: number[] }>(sql`
    select d.id, coalesce(array_agg(s.data_source_id) filter (where s.data_source_id is not null), '{}') as source_ids
    from datasets d left join dataset_sources s on s.dataset_id = d.id
    where d.workspace_id = ${workspaceId} and d.id = any(${ints(ids)})
    group by d.id`);
  return res.rows.map((r) => ({ id: r.id, dataSourceIds: r.source_ids }));
}

export interface DatasetCopyResult {
  /** Names of the materialised copies: their extract data is not carried, they need a first synchronisation. */
  materialised: string[];
  /** Updated copies that were materialised and are live now: their runs must end and their extracts go. */
  nowLive: number[];
}

/**
 * Copies every dataset of the copy map (server/objects/copy-map.ts) into `target`, batched: a fixed number of
 * statements whatever the number of datasets, fields and rules. Each copy is on the copies of the sources mapped beside
 * it (a source not in the map stays the same) and carries the whole schema (copy-schema.ts: objects, fields kept by
 * name on update, relations, hierarchies, filters, parameters) and the security rules (copyDatasetRules of server/access/dataset-security). Formulas name
 * fields by object and field name, so they travel as they are. Extract data and refresh schedules are not carried.
 * Every save moves the version and the edit time: an update of a copy is a save of its own.
 */
export async function copyDatasets(tx: Tx, target: CopyTarget): Promise<DatasetCopyResult> {
  // Read before the upsert overwrites `live`: a copy put back on its source as PUT /api/dataset/{id} live: true would
  // be, whose synchronisation under way has to stop like that save's does.
  const nowLive = await tx.execute<{ id: number }>(sql`
    select c.id from ${COPY_MAP} m join datasets c on c.id = m.new_id join datasets o on o.id = m.old_id
    where m.kind = 'dataset' and not m.created and not c.live and o.live`);
  const upserted = await tx.execute<{ name: string; live: boolean }>(sql`
    insert into datasets (id, name, description, workspace_id, author_id, live)
    select m.new_id, m.name, o.description, ${target.workspaceId}::int, ${target.authorId}::int, o.live
    from ${COPY_MAP} m join datasets o on o.id = m.old_id where m.kind = 'dataset'
    on conflict (id) do update set name = excluded.name, description = excluded.description, live = excluded.live,
      version = datasets.version + 1, updated_at = now()
    returning name, live`);
  await mapDatasetChildren(tx);
  await analyzeCopyMap(tx);
  await clearCopyDependents(tx);
  await upsertSchema(tx);
  await copyDatasetRules(tx);
  await deleteOmitted(tx);
  await copyDatasetDependents(tx);
  return {
    materialised: upserted.rows.filter((r) => !r.live).map((r) => r.name),
    nowLive: nowLive.rows.map((r) => Number(r.id)),
  };
}

/**
 * Moves the given datasets of workspace `from` to `to`, keeping their ids (POST /api/workspaces/{id}/transfer); answers
 * how many moved: one no longer in `from` stays where it is.
 */
export async function moveDatasetsToWorkspace(tx: DbOrTx, ids: number[], from: number, to: number): Promise<number> {
  if (ids.length === 0) return 0;
  const moved = await tx
    .update(datasets)
    .set({ workspaceId: to })
    .where(and(eq(datasets.workspaceId, from), inArray(datasets.id, ids)))
    .returning({ id: datasets.id });
  return moved.length;
}
