import { and, eq, getTableColumns, notInArray, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx, Tx } from '../../db/client';
import {
  datasetFields,
  datasetFilters,
  datasetHierarchies,
  datasetObjects,
  datasetParameters,
  datasetRelations,
  datasets,
} from '../../db/schema/datasets';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { invalid } from '../kernel/errors';
import { ownedObject } from '../access/object-access';
import { assertSchemaSourcesUsable } from '../access/source-rights';
import { dataSourceIdsOf, modelOfRow, type DatasetRow } from './load-model';
import { resolveSchema, type ResolvedSchema, type SavedIds } from './schema-validation';
import { sqlObjectErrors } from './sql-objects';
import type { SchemaInput } from './schema-types';
import { withColumnTypes } from './field-types';
import { datasetDetails } from './views';
import { assertRuleFieldsKept } from './security-rules';
import { recordRevisions } from '../revisions/store';

/*
 * The whole-schema save: validate everything first, then write in one transaction. Saved elements keep their ids
 * (rows are updated in place), new ones get ids from their tables' sequences before anything is written, so every
 * reference between them (a field of a new object, a relation between two new objects) is written final at once.
 */

async function savedIdsOf(db: DbOrTx, datasetId: number): Promise<SavedIds> {
  const ids = async (
    table:
      | typeof datasetObjects
      | typeof datasetRelations
      | typeof datasetHierarchies
      | typeof datasetFilters
      | typeof datasetParameters,
  ) => new Set((await db.select({ id: table.id }).from(table).where(eq(table.datasetId, datasetId))).map((r) => r.id));
  const fields = await db
    .select({ id: datasetFields.id, kind: datasetFields.kind })
    .from(datasetFields)
    .where(eq(datasetFields.datasetId, datasetId));
  return {
    objects: await ids(datasetObjects),
    fields: new Map(fields.map((f) => [f.id, f.kind as 'physical' | 'calculated'])),
    relations: await ids(datasetRelations),
    hierarchies: await ids(datasetHierarchies),
    filters: await ids(datasetFilters),
    parameters: await ids(datasetParameters),
  };
}

/** Real ids for the negative temporary ones, taken from the table's own sequence. */
async function allocate(tx: Tx, table: string, items: { id: number }[]): Promise<Map<number, number>> {
  const temps = items.filter((i) => i.id < 0).map((i) => i.id);
  const map = new Map<number, number>();
  if (temps.length === 0) return map;
  const { rows } = await tx.execute<{ id: number }>(
    sql`select nextval(pg_get_serial_sequence(${table}, 'id'))::int as id from generate_series(1, ${temps.length})`,
  );
  temps.forEach((t, i) => map.set(t, Number(rows[i].id)));
  return map;
}

/** `on conflict (id) do update set` every column from the proposed row. */
function upsertSet(table: PgTable): Record<string, SQL> {
  const set: Record<string, SQL> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    if (column.name !== 'id') set[key] = sql.raw(`excluded."${column.name}"`);
  }
  return set;
}

async function deleteOmitted(
  tx: Tx,
  table:
    | typeof datasetObjects
    | typeof datasetFields
    | typeof datasetRelations
    | typeof datasetHierarchies
    | typeof datasetFilters
    | typeof datasetParameters,
  datasetId: number,
  keep: number[],
) {
  await tx
    .delete(table)
    .where(and(eq(table.datasetId, datasetId), keep.length ? notInArray(table.id, keep) : undefined));
}

/**
 * Writes a resolved schema over the dataset's current one. Statement order keeps every foreign key satisfied:
 * omitted dependents go first, then objects, fields and the rest are upserted, and only then are the omitted fields
 * and objects deleted (no kept row points at them any more).
 */
async function writeSchema(tx: Tx, datasetId: number, s: ResolvedSchema): Promise<void> {
  const objectIds = await allocate(tx, 'dataset_objects', s.objects);
  const fieldIds = await allocate(tx, 'dataset_fields', s.fields);
  const relationIds = await allocate(tx, 'dataset_relations', s.relations);
  const hierarchyIds = await allocate(tx, 'dataset_hierarchies', s.hierarchies);
  const filterIds = await allocate(tx, 'dataset_filters', s.filters);
  const parameterIds = await allocate(tx, 'dataset_parameters', s.parameters);
  const real = (map: Map<number, number>) => (id: number) => (id < 0 ? map.get(id)! : id);
  const obj = real(objectIds);
  const fld = real(fieldIds);

  const relations = s.relations.map((r) => ({ ...r, id: real(relationIds)(r.id) }));
  const hierarchies = s.hierarchies.map((h) => ({ ...h, id: real(hierarchyIds)(h.id) }));
  const filters = s.filters.map((f) => ({ ...f, id: real(filterIds)(f.id) }));
  const parameters = s.parameters.map((p) => ({ ...p, id: real(parameterIds)(p.id) }));
  await deleteOmitted(
    tx,
    datasetRelations,
    datasetId,
    relations.map((r) => r.id),
  );
  await deleteOmitted(
    tx,
    datasetHierarchies,
    datasetId,
    hierarchies.map((h) => h.id),
  );
  await deleteOmitted(
    tx,
    datasetFilters,
    datasetId,
    filters.map((f) => f.id),
  );
  await deleteOmitted(
    tx,
    datasetParameters,
    datasetId,
    parameters.map((p) => p.id),
  );

  if (s.objects.length) {
    await tx
      .insert(datasetObjects)
      .values(
        s.objects.map((o, position) => ({
          id: obj(o.id),
          datasetId,
          dataSourceId: o.dataSourceId,
          name: o.name,
          kind: o.kind,
          schema: o.schema,
          table: o.table,
          sql: o.sql,
          position,
        })),
      )
      .onConflictDoUpdate({ target: datasetObjects.id, set: upsertSet(datasetObjects) });
  }
  if (s.fields.length) {
    await tx
      .insert(datasetFields)
      .values(
        s.fields.map((f, position) => ({
          id: fld(f.id),
          datasetId,
          objectId: f.objectId === null ? null : obj(f.objectId),
          name: f.name,
          title: f.title,
          kind: f.kind,
          column: f.column,
          formula: f.formula,
          derivation: f.derivation ? { ...f.derivation, fieldId: fld(f.derivation.fieldId) } : null,
          primitiveType: f.primitiveType,
          aggregation: f.aggregation,
          hidden: f.hidden,
          description: f.description,
          sortByFieldId: f.sortByFieldId === null ? null : fld(f.sortByFieldId),
          position,
        })),
      )
      .onConflictDoUpdate({ target: datasetFields.id, set: upsertSet(datasetFields) });
  }
  if (relations.length) {
    await tx
      .insert(datasetRelations)
      .values(
        relations.map((r, position) => ({
          id: r.id,
          datasetId,
          leftObjectId: obj(r.leftObjectId),
          rightObjectId: obj(r.rightObjectId),
          joinType: r.joinType,
          conditions: r.conditions.map((c) => ({ leftFieldId: fld(c.leftFieldId), rightFieldId: fld(c.rightFieldId) })),
          position,
        })),
      )
      .onConflictDoUpdate({ target: datasetRelations.id, set: upsertSet(datasetRelations) });
  }
  if (hierarchies.length) {
    await tx
      .insert(datasetHierarchies)
      .values(
        hierarchies.map((h, position) => ({
          id: h.id,
          datasetId,
          name: h.name,
          fieldIds: h.fieldIds.map(fld),
          position,
        })),
      )
      .onConflictDoUpdate({ target: datasetHierarchies.id, set: upsertSet(datasetHierarchies) });
  }
  if (filters.length) {
    await tx
      .insert(datasetFilters)
      .values(
        filters.map((f, position) => ({
          id: f.id,
          datasetId,
          fieldId: fld(f.fieldId),
          op: f.op,
          values: f.values,
          valueType: f.valueType,
          position,
        })),
      )
      .onConflictDoUpdate({ target: datasetFilters.id, set: upsertSet(datasetFilters) });
  }
  if (parameters.length) {
    await tx
      .insert(datasetParameters)
      .values(
        parameters.map((p) => ({
          id: p.id,
          datasetId,
          name: p.name,
          primitiveType: p.declaredType,
          defaultValue: p.defaultValue,
          domain: p.domain,
          order: p.order,
        })),
      )
      .onConflictDoUpdate({ target: datasetParameters.id, set: upsertSet(datasetParameters) });
  }

  await deleteOmitted(
    tx,
    datasetFields,
    datasetId,
    s.fields.map((f) => fld(f.id)),
  );
  await deleteOmitted(
    tx,
    datasetObjects,
    datasetId,
    s.objects.map((o) => obj(o.id)),
  );
}

/** Every save of a dataset (settings or schema) moves its edit time and version: pipelines compare by edit time. */
export async function touchDataset(
  tx: DbOrTx,
  id: number,
  changes: Partial<Pick<DatasetRow, 'name' | 'description' | 'live'>> = {},
): Promise<DatasetRow> {
  const [row] = await tx
    .update(datasets)
    .set({ ...changes, version: sql`${datasets.version} + 1`, updatedAt: sql`now()` })
    .where(eq(datasets.id, id))
    .returning();
  return row;
}

async function resolveFor(tx: DbOrTx, actor: Actor, datasetId: number, input: SchemaInput): Promise<ResolvedSchema> {
  const result = resolveSchema(input, await savedIdsOf(tx, datasetId), await dataSourceIdsOf(tx, datasetId));
  // Both at once; a problem the schema rules found on the same path is the one reported.
  const errors = { ...(await sqlObjectErrors(tx, actor, datasetId, input)), ...(result.ok ? {} : result.errors) };
  if (!result.ok || Object.keys(errors).length > 0) throw invalid(errors);
  return result.schema;
}

/** A field an RLS or CLS rule uses cannot be deleted by a save (and validate says so before the save). */
async function assertSecurityRuleFieldsKept(tx: DbOrTx, id: number, resolved: { fields: { id: number }[] }) {
  const kept = resolved.fields.map((f) => f.id);
  await assertRuleFieldsKept(tx, id, kept);
}

/** PUT /api/dataset/{id}/schema: the whole schema at once; answers the saved schema with real ids. */
export async function saveSchema(deps: AppDeps, actor: Actor, id: number, input: SchemaInput) {
  return deps.db
    .transaction(async (tx) => {
      const { row: saved } = await ownedObject(tx, actor, 'dataset', id, { forUpdate: true });
      await assertSchemaSourcesUsable(
        deps,
        tx,
        saved,
        input.objects.map((o) => o.data_source_id),
      );
      // Column types are filled in before the checks, so calculated fields are typed from them too.
      const typed = await withColumnTypes(deps, tx, actor, id, input);
      const resolved = await resolveFor(tx, actor, id, typed);
      await assertSecurityRuleFieldsKept(tx, id, resolved);
      await writeSchema(tx, id, resolved);
      const row = await touchDataset(tx, id);
      await recordRevisions(tx, 'dataset', [id], 'schema_saved', actor.userId);
      return datasetDetails(row, await modelOfRow(tx, row));
    })
    .finally(() => readCachesChanged(deps)); // widget reads cache the dataset's version
}

/** POST /api/dataset/{id}/schema/validate: the same checks and 422s as the save; nothing is written. */
export async function validateSchema(deps: AppDeps, actor: Actor, id: number, input: SchemaInput) {
  return deps.db.transaction(
    async (tx) => {
      const { row } = await ownedObject(tx, actor, 'dataset', id);
      await assertSchemaSourcesUsable(
        deps,
        tx,
        row,
        input.objects.map((o) => o.data_source_id),
      );
      const s = await resolveFor(tx, actor, id, await withColumnTypes(deps, tx, actor, id, input));
      await assertSecurityRuleFieldsKept(tx, id, s);
      return {
        valid: true as const,
        fields: s.fields.map((f) => ({
          id: f.id,
          name: f.name,
          kind: f.kind,
          formula: f.formula,
          primitive_type: f.primitiveType,
        })),
      };
    },
    { accessMode: 'read only' },
  );
}
