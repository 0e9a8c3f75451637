import { and, asc, eq, inArray, sql, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { datasetFields, datasetObjects, datasetSources, datasets } from '../../db/schema/datasets';
import type { DatasetRow } from './load-model';
import type { DatasetModel } from '../query/compile/dataset-model';
import type { SchemaView } from './schema-types';

export type DatasetMode = 'live' | 'materialized';
const modeOf = (live: boolean): DatasetMode => (live ? 'live' : 'materialized');

/** The dataset record of lists and of create/update answers. */
export function datasetView(row: DatasetRow, dataSourceIds: number[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    live: row.live,
    /** `live` queries the sources directly; `materialized` queries the extract (the list's `type` filter). */
    type: modeOf(row.live),
    data_source_ids: dataSourceIds,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The six schema blocks on the wire. A calculated field has formula filled in and object_id null. */
function schemaView(
  m: Pick<DatasetModel, 'objects' | 'fields' | 'relations' | 'hierarchies' | 'filters' | 'parameters'>,
): SchemaView {
  return {
    objects: m.objects.map((o) => ({
      id: o.id,
      data_source_id: o.dataSourceId,
      name: o.name,
      kind: o.kind,
      schema: o.schema,
      table: o.table,
      sql: o.sql,
    })),
    fields: m.fields.map((f) => ({
      id: f.id,
      object_id: f.objectId,
      name: f.name,
      title: f.title,
      kind: f.kind,
      column: f.column,
      formula: f.formula,
      derivation: f.derivation
        ? { field_id: f.derivation.fieldId, function: f.derivation.function, args: f.derivation.args ?? [] }
        : null,
      primitive_type: f.primitiveType,
      aggregation: f.aggregation,
      hidden: f.hidden,
      description: f.description,
      sort_by_field_id: f.sortByFieldId,
    })),
    relations: m.relations.map((r) => ({
      id: r.id,
      left_object_id: r.leftObjectId,
      right_object_id: r.rightObjectId,
      join_type: r.joinType,
      conditions: r.conditions.map((c) => ({ left_field_id: c.leftFieldId, right_field_id: c.rightFieldId })),
    })),
    hierarchies: m.hierarchies.map((h) => ({ id: h.id, name: h.name, field_ids: h.fieldIds })),
    filters: m.filters.map((f) => ({
      id: f.id,
      field_id: f.fieldId,
      op: f.op,
      values: f.values,
      value_type: f.valueType,
    })),
    parameters: m.parameters.map((p) => ({
      id: p.id,
      name: p.name,
      primitive_type: p.declaredType ?? p.primitiveType,
      default_value: p.defaultValue,
      domain: p.domain,
      order: p.order,
    })),
  };
}

export function datasetDetails(row: DatasetRow, model: DatasetModel) {
  return { ...datasetView(row, model.dataSourceIds), ...schemaView(model) };
}

/**
 * The schema as a reader who does not manage the dataset's rules sees it: the fields their column rules hide (and the
 * calculated fields reading them) are left out, like everything else that would name them or show their values:
 * hierarchy levels, the dataset's own filters on them (their values are the field's values), sort_by_field_id.
 * Relations keep their conditions: they join objects, and show no value.
 */
export function withoutHiddenFields(model: DatasetModel, hidden: Set<number>): DatasetModel {
  if (hidden.size === 0) return model;
  const shown = (id: number) => !hidden.has(id);
  return {
    ...model,
    fields: model.fields
      .filter((f) => shown(f.id))
      .map((f) => (f.sortByFieldId !== null && !shown(f.sortByFieldId) ? { ...f, sortByFieldId: null } : f)),
    hierarchies: model.hierarchies
      .map((h) => ({ ...h, fieldIds: h.fieldIds.filter(shown) }))
      .filter((h) => h.fieldIds.length > 0),
    filters: model.filters.filter((f) => shown(f.fieldId)),
  };
}

/*
 * What other areas read of datasets without loading a whole model: fields by id (dashboard layouts and selectors,
 * mailing slices, export titles), the datasets on a source, and the pieces of a dataset other areas' single queries
 * join (the widget data path).
 */

/** A dataset field as another object names it. */
export interface FieldRef {
  id: number;
  datasetId: number;
  /** The dataset's workspace. */
  workspaceId: number;
  name: string;
  title: string;
  /** The name of its object; null for a calculated field. */
  objectName: string | null;
}

function fieldRefQuery(db: DbOrTx) {
  return db
    .select({
      id: datasetFields.id,
      datasetId: datasetFields.datasetId,
      workspaceId: datasets.workspaceId,
      name: datasetFields.name,
      title: datasetFields.title,
      objectName: datasetObjects.name,
    })
    .from(datasetFields)
    .innerJoin(datasets, eq(datasets.id, datasetFields.datasetId))
    .leftJoin(datasetObjects, eq(datasetObjects.id, datasetFields.objectId));
}

/** The fields of any datasets by id, in one query; an id that is no field is absent. */
export async function fieldRefsById(db: DbOrTx, ids: number[]): Promise<Map<number, FieldRef>> {
  if (ids.length === 0) return new Map();
  const rows = await fieldRefQuery(db).where(inArray(datasetFields.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r]));
}

/** Every field of the dataset, in schema order. */
export async function fieldRefsOfDataset(db: DbOrTx, datasetId: number): Promise<FieldRef[]> {
  return fieldRefQuery(db)
    .where(eq(datasetFields.datasetId, datasetId))
    .orderBy(asc(datasetFields.position), asc(datasetFields.id));
}

/** Datasets built on the source (they block its deletion), by name. */
export async function datasetsOnSource(
  db: DbOrTx,
  sourceId: number,
): Promise<{ id: number; name: string; workspaceId: number }[]> {
  return db
    .select({ id: datasets.id, name: datasets.name, workspaceId: datasets.workspaceId })
    .from(datasetSources)
    .innerJoin(datasets, eq(datasets.id, datasetSources.datasetId))
    .where(eq(datasetSources.dataSourceId, sourceId))
    .orderBy(datasets.name, datasets.id);
}

/** Datasets built on any of the sources, each with the source, in one statement (a pipeline rollback's check). */
export async function datasetsOnSources(
  db: DbOrTx,
  sourceIds: number[],
): Promise<{ id: number; name: string; sourceId: number }[]> {
  if (sourceIds.length === 0) return [];
  return db
    .select({ id: datasets.id, name: datasets.name, sourceId: datasetSources.dataSourceId })
    .from(datasetSources)
    .innerJoin(datasets, eq(datasets.id, datasetSources.datasetId))
    .where(inArray(datasetSources.dataSourceId, sourceIds))
    .orderBy(datasets.name, datasets.id);
}

/** The datasets of a workspace with the sources each is built on (a transfer moves what they need along). */
export async function datasetsInWorkspace(
  db: DbOrTx,
  workspaceId: number,
): Promise<{ id: number; name: string; dataSourceIds: number[] }[]> {
  const rows = await db
    .select({ id: datasets.id, name: datasets.name, sourceId: datasetSources.dataSourceId })
    .from(datasets)
    .leftJoin(datasetSources, eq(datasetSources.datasetId, datasets.id))
    .where(eq(datasets.workspaceId, workspaceId));
  const byId = new Map<number, { id: number; name: string; dataSourceIds: number[] }>();
  for (const r of rows) {
    const d = byId.get(r.id) ?? { id: r.id, name: r.name, dataSourceIds: [] };
    if (r.sourceId !== null) d.dataSourceIds.push(r.sourceId);
    byId.set(r.id, d);
  }
  return [...byId.values()];
}

/** Of the given datasets, those that still exist and are materialised (live = false): the ones an extract serves. */
export async function materialisedAmong(db: DbOrTx, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db
    .select({ id: datasets.id })
    .from(datasets)
    .where(and(inArray(datasets.id, ids), eq(datasets.live, false)));
  return new Set(rows.map((r) => r.id));
}

/**
 * What other areas may join of a dataset (a widget's data request reads its dataset's version and owner with the
 * widget), as a subquery PostgreSQL inlines, so their query stays one statement.
 */
export const datasetRef = (alias = 'dataset_ref') =>
  new QueryBuilder()
    .select({
      id: datasets.id,
      name: datasets.name,
      workspaceId: datasets.workspaceId,
      authorId: datasets.authorId,
      version: datasets.version,
    })
    .from(datasets)
    .as(alias);

/** SQL: the ids of the data sources of the dataset `datasetId` (a column or expression of the caller's query). */
export const sourceIdsOfDatasetSql = (datasetId: SQLWrapper) =>
  sql`(select ${sql.identifier('ds_src')}.${sql.identifier('data_source_id')} from ${datasetSources} as ${sql.identifier('ds_src')}
    where ${sql.identifier('ds_src')}.${sql.identifier('dataset_id')} = ${datasetId})`;
