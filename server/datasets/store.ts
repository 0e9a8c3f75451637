import { and, eq, notInArray } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { datasetClsRules } from '../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../db/schema/dataset-rls-rules';
import { datasetSources, datasets } from '../../db/schema/datasets';
import { badRequest } from '../kernel/errors';
import { mapped, type CloneTarget, type IdMap } from '../objects/id-map';
import type { DatasetModel } from '../query/compile/dataset-model';
import { loadDatasetRow, modelOfRow, type DatasetRow } from './load-model';
import { schemaInputOf, touchDataset, writeSchema } from './schema-store';
import { emptySavedIds, resolveSchema } from './schema-validation';

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

/**
 * A copy of the dataset in `target`: the same settings and schema under new ids, on the sources the id map gives
 * (a source not cloned in this run stays the same). Formulas name fields by object and field name, so they are kept
 * as they are. Records the dataset and every field (old -> new) in `idMap` and answers the new id.
 */
export async function cloneDataset(tx: Tx, id: number, target: CloneTarget, idMap: IdMap): Promise<number> {
  const { row, model } = await loadFullDataset(tx, id);
  const sourceIds = model.dataSourceIds.map((s) => mapped(idMap.dataSources, s));
  const copy = await insertDataset(
    tx,
    {
      name: target.name ?? row.name,
      description: row.description,
      workspaceId: target.workspaceId,
      authorId: target.authorId,
      live: row.live,
    },
    sourceIds,
  );
  // The schema goes through the same checks and writer as an ordinary save, with temporary ids for every element.
  const input = schemaInputOf({
    ...model,
    objects: model.objects.map((o) => ({ ...o, dataSourceId: mapped(idMap.dataSources, o.dataSourceId) })),
  });
  const resolved = resolveSchema(input, emptySavedIds(), sourceIds);
  // The original was saved through the same checks; a failure here means it was damaged outside the API.
  if (!resolved.ok) throw badRequest('Схему датасета не удалось скопировать: она не проходит проверку');
  const { newFieldIds } = await writeSchema(tx, copy.id, resolved.schema);
  // schemaInputOf keeps the model's order: input.fields[i] is model.fields[i] under its temporary id.
  model.fields.forEach((f, i) => idMap.datasetFields.set(f.id, newFieldIds.get(input.fields[i].id)!));
  await cloneSecurityRules(tx, id, copy.id, idMap.datasetFields);
  idMap.datasets.set(id, copy.id);
  return copy.id;
}

/**
 * Row- and column-level security rules go with the copy, on the copied fields: a copy without them would show every
 * row and column to the users the rules restrict (fail closed; the users and groups they name are global).
 */
async function cloneSecurityRules(tx: Tx, fromId: number, toId: number, fields: Map<number, number>): Promise<void> {
  const field = (id: number) => mapped(fields, id);
  const rls = await tx.select().from(datasetRlsRules).where(eq(datasetRlsRules.datasetId, fromId));
  if (rls.length) {
    await tx.insert(datasetRlsRules).values(
      rls.map(({ id: _id, createdAt: _c, updatedAt: _u, ...r }) => ({
        ...r,
        datasetId: toId,
        fieldId: field(r.fieldId),
      })),
    );
  }
  const cls = await tx.select().from(datasetClsRules).where(eq(datasetClsRules.datasetId, fromId));
  if (cls.length) {
    await tx.insert(datasetClsRules).values(
      cls.map(({ id: _id, createdAt: _c, updatedAt: _u, ...r }) => ({
        ...r,
        datasetId: toId,
        fieldIds: r.fieldIds.map(field),
      })),
    );
  }
}
