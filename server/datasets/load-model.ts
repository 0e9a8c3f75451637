import { asc, eq, inArray } from 'drizzle-orm';
import type { PrimitiveType } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import {
  datasetFields,
  datasetFilters,
  datasetHierarchies,
  datasetObjects,
  datasetParameters,
  datasetRelations,
  datasetSources,
  datasets,
} from '../../db/schema/datasets';
import { datasetNotFound } from './messages';
import type {
  DatasetField,
  DatasetModel,
  DatasetObject,
  DatasetParameter,
  DatasetRelation,
  Derivation,
  ParameterDomain,
} from '../query/compile/dataset-model';
import { parameterPrimitiveType } from './parameters';
import type { ParameterType } from './schema-types';

export type DatasetRow = typeof datasets.$inferSelect;

/** The dataset row; locked for the rest of the transaction when asked (every save takes the lock first). 404 if missing. */
export async function loadDatasetRow(db: DbOrTx, id: number, opts: { forUpdate?: boolean } = {}): Promise<DatasetRow> {
  const query = db.select().from(datasets).where(eq(datasets.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  if (!row) throw datasetNotFound(id);
  return row;
}

/*
 * Row locks the etl area (extracts) takes, beside loadDatasetRow and not in store.ts: store.ts reaches server/etl
 * (schema-store.ts -> the dataset read context), so server/etl could not import it without a cycle.
 */

/**
 * The dataset's row locked FOR SHARE until the caller commits (an extract run starting for it: a delete or a switch to
 * live locks it FOR UPDATE, so the two queue), with whether it is live; null when it is gone.
 */
export async function lockDatasetForShare(tx: DbOrTx, id: number): Promise<{ live: boolean } | null> {
  const [row] = await tx.select({ live: datasets.live }).from(datasets).where(eq(datasets.id, id)).for('share');
  return row ?? null;
}

/** The given datasets, or every dataset of the workspace, locked FOR UPDATE in id order: the ids found. */
export async function lockDatasets(
  tx: DbOrTx,
  of: { datasetIds: number[] } | { workspaceId: number },
): Promise<number[]> {
  if ('datasetIds' in of && !of.datasetIds.length) return [];
  const rows = await tx
    .select({ id: datasets.id })
    .from(datasets)
    .where('workspaceId' in of ? eq(datasets.workspaceId, of.workspaceId) : inArray(datasets.id, of.datasetIds))
    .orderBy(asc(datasets.id))
    .for('update');
  return rows.map((r) => r.id);
}

export async function dataSourceIdsOf(db: DbOrTx, datasetId: number): Promise<number[]> {
  const rows = await db
    .select({ id: datasetSources.dataSourceId })
    .from(datasetSources)
    .where(eq(datasetSources.datasetId, datasetId))
    .orderBy(asc(datasetSources.position), asc(datasetSources.dataSourceId));
  return rows.map((r) => r.id);
}

/** The dataset's model from an already read row (no access check: callers decide who may see it). */
export async function modelOfRow(db: DbOrTx, row: DatasetRow): Promise<DatasetModel> {
  const id = row.id;
  // One after another: the reads may share a transaction's single connection.
  const dataSourceIds = await dataSourceIdsOf(db, id);
  const objects = await db
    .select()
    .from(datasetObjects)
    .where(eq(datasetObjects.datasetId, id))
    .orderBy(asc(datasetObjects.position), asc(datasetObjects.id));
  const fields = await db
    .select()
    .from(datasetFields)
    .where(eq(datasetFields.datasetId, id))
    .orderBy(asc(datasetFields.position), asc(datasetFields.id));
  const relations = await db
    .select()
    .from(datasetRelations)
    .where(eq(datasetRelations.datasetId, id))
    .orderBy(asc(datasetRelations.position), asc(datasetRelations.id));
  const hierarchies = await db
    .select()
    .from(datasetHierarchies)
    .where(eq(datasetHierarchies.datasetId, id))
    .orderBy(asc(datasetHierarchies.position), asc(datasetHierarchies.id));
  const filters = await db
    .select()
    .from(datasetFilters)
    .where(eq(datasetFilters.datasetId, id))
    .orderBy(asc(datasetFilters.position), asc(datasetFilters.id));
  const parameters = await db
    .select()
    .from(datasetParameters)
    .where(eq(datasetParameters.datasetId, id))
    .orderBy(asc(datasetParameters.order), asc(datasetParameters.id));
  return {
    id,
    name: row.name,
    workspaceId: row.workspaceId,
    live: row.live,
    dataSourceIds,
    version: row.version,
    updatedAt: row.updatedAt,
    objects: objects.map((o): DatasetObject => ({
      id: o.id,
      dataSourceId: o.dataSourceId,
      name: o.name,
      kind: o.kind as DatasetObject['kind'],
      schema: o.schema,
      table: o.table,
      sql: o.sql,
    })),
    fields: fields.map((f): DatasetField => ({
      id: f.id,
      objectId: f.objectId,
      name: f.name,
      title: f.title,
      kind: f.kind as DatasetField['kind'],
      column: f.column,
      formula: f.formula,
      derivation: (f.derivation as Derivation | null) ?? null,
      primitiveType: f.primitiveType as PrimitiveType,
      aggregation: f.aggregation as DatasetField['aggregation'],
      hidden: f.hidden,
      description: f.description,
      sortByFieldId: f.sortByFieldId,
    })),
    relations: relations.map((r): DatasetRelation => ({
      id: r.id,
      leftObjectId: r.leftObjectId,
      rightObjectId: r.rightObjectId,
      joinType: r.joinType as DatasetRelation['joinType'],
      conditions: r.conditions as DatasetRelation['conditions'],
    })),
    hierarchies: hierarchies.map((h) => ({ id: h.id, name: h.name, fieldIds: h.fieldIds })),
    filters: filters.map((f) => ({
      id: f.id,
      fieldId: f.fieldId,
      op: f.op,
      values: f.values as unknown[],
      valueType: f.valueType,
    })),
    parameters: parameters.map((p): DatasetParameter => ({
      id: p.id,
      name: p.name,
      primitiveType: parameterPrimitiveType(p.primitiveType as ParameterType),
      declaredType: p.primitiveType,
      defaultValue: p.defaultValue,
      domain: p.domain as ParameterDomain,
      order: p.order,
    })),
  };
}

/**
 * The dataset as the query engine sees it. 404 «Датасет не найден (id …)» when it does not exist; access is the
 * caller's business (the engine checks the workspace of `workspaceId`).
 */
export async function loadDatasetModel(db: DbOrTx, id: number): Promise<DatasetModel> {
  return inSnapshot(db, async (tx) => modelOfRow(tx, await loadDatasetRow(tx, id)));
}

/**
 * Runs several reads on one snapshot, so that a schema saved meanwhile is seen whole or not at all. Inside a
 * transaction the caller's transaction is that snapshot already.
 */
export function inSnapshot<T>(db: DbOrTx, read: (tx: DbOrTx) => Promise<T>): Promise<T> {
  if ('rollback' in db) return read(db);
  return db.transaction(read, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}
