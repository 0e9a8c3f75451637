import { and, eq, sql } from 'drizzle-orm';
import type { PrimitiveType } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { datasetFields, datasetObjects, datasets } from '../../db/schema/datasets';
import type { Actor } from '../auth/actor';
import { refreshMetadata, resolveTable, tableColumns } from '../data-sources/metadata';
import { connectorForSource, type DataSourceRow } from '../data-sources/connection';
import { sourcesByIds } from '../data-sources/views';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { readableSourceIds } from '../access/source-rights';
import { envOfModel, analyzeCalculated } from './formulas';
import { dataSourceIdsOf, loadDatasetModel } from './load-model';
import { normalizeObjectSql } from './schema-validation';
import type { FieldInput, SchemaInput } from './schema-types';
import { sqlObjectErrors } from './sql-objects';
import { formatFieldPath } from '../kernel/validation';
import { recordRevisions } from '../revisions/store';

/*
 * The primitive type of a physical field of a table object comes from the source's own column metadata (the
 * connector's listColumns, through the metadata cache), so the client need not send it: a field saved without a
 * type, or with 'unknown', gets the column's type at PUT /api/dataset/{id}/schema (and /schema/validate), and fields
 * still 'unknown' get it at POST /api/data-source/{id}/metadata/refresh. A type the client did send is kept, even
 * when it differs from the column's: it may be deliberate (a code kept as text), and nothing marks which types were
 * inferred, so a refresh does not overwrite types either.
 *
 * A source that cannot be read (down, slow, table gone, no right) never fails the save: its fields stay 'unknown'
 * and the save goes on. The schema is the user's work and a source outage is not their mistake; the type is filled
 * in at the next save or metadata refresh. The lookups share one time budget so a hung source cannot hold the
 * dataset's row lock for long.
 *
 * Fields of SQL objects are typed from the columns of the query read with LIMIT 0 (read-only, within the same
 * budget), but only for objects the caller may save as they are: the query of an object they may not put there
 * (see sql-objects.ts) is never run.
 */

const TYPE_LOOKUP_BUDGET_MS = 5_000;

type ColumnTypes = Map<string, PrimitiveType>;

const isPhysical = (f: FieldInput) =>
  f.kind === 'physical' || (f.kind === undefined && (f.formula ?? null) === null && (f.derivation ?? null) === null);
const untyped = (t: PrimitiveType | null | undefined) => t === undefined || t === null || t === 'unknown';

/** The column's type by exact name, else by a case-insensitive name when only one column matches. */
function typeOfColumn(types: ColumnTypes, column: string): PrimitiveType | undefined {
  const exact = types.get(column);
  if (exact !== undefined) return exact;
  const lower = column.toLowerCase();
  const matches = [...types].filter(([name]) => name.toLowerCase() === lower);
  return matches.length === 1 ? matches[0][1] : undefined;
}

/** The types of a table's columns, or null when the source cannot tell (any failure: see above). */
async function columnTypes(
  deps: AppDeps,
  row: DataSourceRow,
  schema: string | null,
  table: string,
): Promise<ColumnTypes | null> {
  try {
    const info = await resolveTable(deps, row, schema ?? undefined, table);
    const columns = await tableColumns(deps, row, info);
    return new Map(columns.map((c) => [c.name, c.primitive_type]));
  } catch {
    return null;
  }
}

/** The columns of a dataset SQL object's query, read without rows (null on any failure, as above). */
async function queryColumnTypes(deps: AppDeps, row: DataSourceRow, sql: string): Promise<ColumnTypes | null> {
  try {
    const result = await connectorForSource(deps, row).query(`SELECT * FROM (${sql}) q LIMIT 0`, [], {
      readOnly: true,
      timeoutMs: TYPE_LOOKUP_BUDGET_MS,
    });
    return new Map(result.columns.map((c) => [c.name, c.primitive_type]));
  } catch {
    return null;
  }
}

/** Runs the lookups side by side; whatever has not answered within the budget counts as unreadable. */
async function lookUpAll<K>(keys: K[], look: (key: K) => Promise<ColumnTypes | null>): Promise<Map<K, ColumnTypes>> {
  const found = new Map<K, ColumnTypes>();
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, TYPE_LOOKUP_BUDGET_MS);
  });
  const all = Promise.all(
    keys.map(async (key) => {
      const types = await look(key);
      if (types) found.set(key, types);
    }),
  );
  await Promise.race([all, budget]);
  clearTimeout(timer);
  return new Map(found);
}

async function sourceRows(db: DbOrTx, ids: number[]): Promise<Map<number, DataSourceRow>> {
  return new Map((await sourcesByIds(db, ids)).map((r) => [r.id, r]));
}

const tableKey = (sourceId: number, schema: string | null, table: string) => JSON.stringify([sourceId, schema, table]);

/**
 * The schema body with the column types filled in for untyped physical fields of table objects. Only sources of
 * the dataset that the caller can read are asked; everything else is returned as it came.
 */
export async function withColumnTypes(
  deps: AppDeps,
  db: DbOrTx,
  actor: Actor,
  datasetId: number,
  input: SchemaInput,
): Promise<SchemaInput> {
  const tables = new Map<number, { sourceId: number; schema: string | null; table: string }>();
  const queries = new Map<number, { sourceId: number; sql: string; index: number }>();
  input.objects.forEach((o, index) => {
    if ((o.kind ?? 'table') === 'sql') {
      const sql = typeof o.sql === 'string' ? normalizeObjectSql(o.sql) : null;
      if (sql !== null) queries.set(o.id, { sourceId: o.data_source_id, sql, index });
    } else if (typeof o.table === 'string' && o.table.trim() !== '') {
      tables.set(o.id, { sourceId: o.data_source_id, schema: o.schema?.trim() || null, table: o.table.trim() });
    }
  });
  const sourceOf = (objectId: number) => tables.get(objectId)?.sourceId ?? queries.get(objectId)?.sourceId;
  const wanted = input.fields.filter(
    (f) =>
      isPhysical(f) &&
      untyped(f.primitive_type) &&
      typeof f.column === 'string' &&
      f.object_id != null &&
      sourceOf(f.object_id) !== undefined,
  );
  if (wanted.length === 0) return input;
  const toType = new Set(wanted);

  const attached = new Set(await dataSourceIdsOf(db, datasetId));
  const candidates = [...new Set(wanted.map((f) => sourceOf(f.object_id!)!))].filter((id) => attached.has(id));
  const readable = await readableSourceIds(db, actor, candidates);
  const rows = await sourceRows(db, [...readable]);
  const refusedSql = new Set(Object.keys(await sqlObjectErrors(db, actor, datasetId, input)));

  // One lookup per table or query, whatever the number of its fields.
  const keyOfObject = (objectId: number): string | undefined => {
    const t = tables.get(objectId);
    if (t) return rows.has(t.sourceId) ? tableKey(t.sourceId, t.schema, t.table) : undefined;
    const q = queries.get(objectId)!;
    if (!rows.has(q.sourceId) || refusedSql.has(formatFieldPath(['objects', q.index, 'sql']))) return undefined;
    return JSON.stringify([q.sourceId, q.sql]);
  };
  const lookups = new Map<string, () => Promise<ColumnTypes | null>>();
  for (const f of wanted) {
    const key = keyOfObject(f.object_id!);
    if (key === undefined || lookups.has(key)) continue;
    const t = tables.get(f.object_id!);
    const q = queries.get(f.object_id!);
    lookups.set(
      key,
      t
        ? () => columnTypes(deps, rows.get(t.sourceId)!, t.schema, t.table)
        : () => queryColumnTypes(deps, rows.get(q!.sourceId)!, q!.sql),
    );
  }
  const types = await lookUpAll([...lookups.keys()], (key) => lookups.get(key)!());

  return {
    ...input,
    fields: input.fields.map((f) => {
      if (!toType.has(f)) return f;
      const key = keyOfObject(f.object_id!);
      const found = key === undefined ? undefined : types.get(key);
      const type = found && typeOfColumn(found, f.column!.trim());
      return type && type !== 'unknown' ? { ...f, primitive_type: type } : f;
    }),
  };
}

/**
 * After POST /api/data-source/{id}/metadata/refresh: physical fields still 'unknown' in table objects on that source
 * get their column's type, the calculated fields of those datasets are re-typed from them, and every dataset that
 * changed moves its edit time and version (as a save does). Returns how many fields got a type.
 */
async function retypeFieldsOfSource(deps: AppDeps, sourceId: number): Promise<number> {
  const pending = await deps.db
    .select({
      fieldId: datasetFields.id,
      datasetId: datasetFields.datasetId,
      column: datasetFields.column,
      schema: datasetObjects.schema,
      table: datasetObjects.table,
    })
    .from(datasetFields)
    .innerJoin(datasetObjects, eq(datasetObjects.id, datasetFields.objectId))
    .where(
      and(
        eq(datasetObjects.dataSourceId, sourceId),
        eq(datasetObjects.kind, 'table'),
        eq(datasetFields.kind, 'physical'),
        eq(datasetFields.primitiveType, 'unknown'),
      ),
    );
  if (pending.length === 0) return 0;
  const row = (await sourceRows(deps.db, [sourceId])).get(sourceId);
  if (!row) return 0;

  const keyOf = (p: (typeof pending)[number]) => tableKey(sourceId, p.schema, p.table ?? '');
  const lookups = new Map(pending.filter((p) => p.table).map((p) => [keyOf(p), { schema: p.schema, table: p.table! }]));
  const types = await lookUpAll([...lookups.keys()], (key) => {
    const l = lookups.get(key)!;
    return columnTypes(deps, row, l.schema, l.table);
  });

  const updates = new Map<number, { fieldId: number; type: PrimitiveType }[]>();
  for (const p of pending) {
    const found = types.get(keyOf(p));
    const type = found && p.column ? typeOfColumn(found, p.column) : undefined;
    if (!type || type === 'unknown') continue;
    if (!updates.has(p.datasetId)) updates.set(p.datasetId, []);
    updates.get(p.datasetId)!.push({ fieldId: p.fieldId, type });
  }

  let typed = 0;
  for (const [datasetId, fields] of updates) {
    typed += await deps.db.transaction(async (tx) => {
      // The same lock a schema save takes; a dataset deleted meanwhile has nothing left to type.
      const [locked] = await tx
        .select({ id: datasets.id })
        .from(datasets)
        .where(eq(datasets.id, datasetId))
        .for('update');
      if (!locked) return 0;
      let n = 0;
      for (const f of fields) {
        const done = await tx
          .update(datasetFields)
          .set({ primitiveType: f.type })
          .where(and(eq(datasetFields.id, f.fieldId), eq(datasetFields.primitiveType, 'unknown')))
          .returning({ id: datasetFields.id });
        n += done.length;
      }
      if (n === 0) return 0;
      await retypeCalculated(tx, datasetId);
      // As touchDataset does for every save (not imported: the schema save imports this file).
      await tx
        .update(datasets)
        .set({ version: sql`${datasets.version} + 1`, updatedAt: sql`now()` })
        .where(eq(datasets.id, datasetId));
      // A save by the platform, not by a user: the revision has no author.
      await recordRevisions(tx, 'dataset', [datasetId], 'saved', null);
      return n;
    });
  }
  // Widget reads cache the dataset's version: the next read takes the new types.
  if (typed > 0) readCachesChanged(deps);
  return typed;
}

/**
 * POST /api/data-source/{id}/metadata/refresh: the source's metadata read again, then the untyped fields of the
 * datasets built on it typed from it. Composed here, not in the metadata module, so that data sources do not
 * depend on datasets.
 */
export async function refreshMetadataAndFieldTypes(deps: AppDeps, actor: Actor, sourceId: number) {
  const refreshed = await refreshMetadata(deps, actor, sourceId);
  await retypeFieldsOfSource(deps, sourceId);
  return refreshed;
}

/** Calculated fields typed again from the dataset's current physical types, by the rule the schema save uses. */
async function retypeCalculated(tx: DbOrTx, datasetId: number): Promise<void> {
  const model = await loadDatasetModel(tx, datasetId);
  const results = analyzeCalculated(envOfModel(model));
  for (const f of model.fields) {
    if (f.kind !== 'calculated') continue;
    const r = results.get(f.name);
    if (!r?.ok || r.type === f.primitiveType) continue;
    if (r.type !== 'unknown' || f.primitiveType === 'unknown') {
      await tx.update(datasetFields).set({ primitiveType: r.type }).where(eq(datasetFields.id, f.id));
    }
  }
}
