import { and, eq, sql } from 'drizzle-orm';
import type { ColumnInfo, SourceSettings, TableInfo } from '../../adapters/sources';
import { dataSourceMetadata } from '../../db/schema/data-sources';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { invalid, notFound } from '../kernel/errors';
import { ownedObject, rawReadableObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { connectorForSource, type DataSourceRow } from './connection';
import { viaConnector } from './connector-errors';

/*
 * Schemas, tables and columns of a source, read through its connector once and kept in data_source_metadata until
 * an owner refreshes them (or the connection or file changes). A name that is not in the cache is looked up once
 * more on the source before it is refused, so a table created after the cache was filled is still found.
 */

type CacheKey = string;
const SCHEMAS: CacheKey = 'schemas';
const tablesKey = (schema: string): CacheKey => `tables:${JSON.stringify([schema])}`;
const columnsKey = (schema: string, table: string): CacheKey => `columns:${JSON.stringify([schema, table])}`;

async function cached<T>(
  deps: AppDeps,
  row: DataSourceRow,
  key: CacheKey,
  load: () => Promise<T>,
  fresh = false,
): Promise<T> {
  if (!fresh) {
    const [hit] = await deps.db
      .select({ value: dataSourceMetadata.value })
      .from(dataSourceMetadata)
      .where(and(eq(dataSourceMetadata.dataSourceId, row.id), eq(dataSourceMetadata.cacheKey, key)));
    if (hit) return hit.value as T;
  }
  const value = await viaConnector(load);
  await deps.db
    .insert(dataSourceMetadata)
    .values({ dataSourceId: row.id, cacheKey: key, value })
    .onConflictDoUpdate({
      target: [dataSourceMetadata.dataSourceId, dataSourceMetadata.cacheKey],
      set: { value, fetchedAt: sql`now()` },
    })
    // The source may have been deleted meanwhile: its cache has nowhere to go, which is fine.
    .catch(() => undefined);
  return value;
}

const schemasOf = (deps: AppDeps, row: DataSourceRow, fresh = false) =>
  cached<string[]>(deps, row, SCHEMAS, () => connectorForSource(deps, row).listSchemas(), fresh);
const tablesOf = (deps: AppDeps, row: DataSourceRow, schema: string, fresh = false) =>
  cached<TableInfo[]>(deps, row, tablesKey(schema), () => connectorForSource(deps, row).listTables(schema), fresh);
const columnsOf = (deps: AppDeps, row: DataSourceRow, schema: string, table: string, fresh = false) =>
  cached<ColumnInfo[]>(
    deps,
    row,
    columnsKey(schema, table),
    () => connectorForSource(deps, row).listColumns(schema, table),
    fresh,
  );

/** Where tables are looked for when the request names no schema. */
function defaultSchema(row: DataSourceRow): string {
  const s = row.settings as SourceSettings;
  switch (row.type) {
    case 'postgresql':
      return 'public';
    case 'mysql':
      return s.db || '';
    case 'clickhouse':
      return s.db || 'default';
    default:
      return 'main';
  }
}

/** Looks a name up in a cached list, re-reading the list from the source once when it is not there. */
async function findFresh<T>(
  read: (fresh: boolean) => Promise<T[]>,
  match: (item: T) => boolean,
): Promise<T | undefined> {
  const found = (await read(false)).find(match);
  return found ?? (await read(true)).find(match);
}

async function resolveSchema(deps: AppDeps, row: DataSourceRow, schema: string | undefined): Promise<string> {
  const name = schema ?? defaultSchema(row);
  if (!name) throw invalid({ schema: 'must not be blank' });
  const found = await findFresh(
    (fresh) => schemasOf(deps, row, fresh),
    (s) => s === name,
  );
  if (found === undefined) throw notFound(`Схема не найдена: ${name}`);
  return found;
}

export async function resolveTable(
  deps: AppDeps,
  row: DataSourceRow,
  schema: string | undefined,
  table: string,
): Promise<TableInfo> {
  const s = await resolveSchema(deps, row, schema);
  const found = await findFresh(
    (fresh) => tablesOf(deps, row, s, fresh),
    (t) => t.name === table,
  );
  if (!found) throw notFound(`Таблица не найдена: ${s}.${table}`);
  return found;
}

export async function tableColumns(deps: AppDeps, row: DataSourceRow, t: TableInfo): Promise<ColumnInfo[]> {
  return columnsOf(deps, row, t.schema, t.name);
}

export async function resolveColumn(
  deps: AppDeps,
  row: DataSourceRow,
  t: TableInfo,
  column: string,
): Promise<ColumnInfo> {
  const found = await findFresh(
    (fresh) => columnsOf(deps, row, t.schema, t.name, fresh),
    (c) => c.name === column,
  );
  if (!found) throw invalid({ column: `no such column in ${t.schema}.${t.name}` }, `Столбец не найден: ${column}`);
  return found;
}

/*
 * Listing a source's schemas, tables and columns (names and types) describes the source as it is, outside any
 * dataset: a column a CLS rule hides from a reader in every dataset on the source would still be listed here. So it
 * needs the level of reading the source raw (rawReadableObject, as its preview): an editing role in its workspace, the
 * `edit` right on it, or a system administrator; a Наблюдатель or `view` right holder reads through datasets.
 */

export async function listSchemas(deps: AppDeps, actor: Actor, id: number) {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'read', 'список схем');
  return { content: await schemasOf(deps, row) };
}

export async function listTables(deps: AppDeps, actor: Actor, id: number, input: { schema?: string; query?: string }) {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'read', `список таблиц ${input.schema ?? ''}`.trim());
  const schema = await resolveSchema(deps, row, input.schema);
  const needle = input.query?.toLowerCase();
  const tables = await tablesOf(deps, row, schema);
  return { content: needle ? tables.filter((t) => t.name.toLowerCase().includes(needle)) : tables };
}

export async function listColumns(deps: AppDeps, actor: Actor, id: number, input: { schema?: string; table: string }) {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'read', `столбцы ${input.schema ?? ''}.${input.table}`);
  const table = await resolveTable(deps, row, input.schema, input.table);
  return { content: await tableColumns(deps, row, table) };
}

/** Clears the cache and reads the schema list again (tables and columns are read again on their next use). */
export async function refreshMetadata(deps: AppDeps, actor: Actor, id: number) {
  const { row } = await ownedObject(deps.db, actor, 'data_source', id);
  await deps.db.transaction(async (tx) => {
    await tx.delete(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, id));
    await logSourceAccess(tx, id, actor, 'edit', 'обновление метаданных');
  });
  const schemas = await schemasOf(deps, row, true);
  return { schemas, refreshed_at: new Date().toISOString() };
}
