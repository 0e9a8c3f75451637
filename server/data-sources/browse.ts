import {
  sourceKindInfo,
  type Dialect,
  type ResultColumn,
  type SourceKind,
  type TableInfo,
} from '../../adapters/sources';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { escapeLiteral, quoteIdentifier } from '../query/expr/dialect';
import { rawReadableObject, readableIds, readableObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { connectorForSource } from './connection';
import { viaConnector } from './connector-errors';
import { sourceObjects, type SourceObject } from './dependents';
import { resolveColumn, resolveTable } from './metadata';

const PREVIEW_DEFAULT_LIMIT = 100;
export const PREVIEW_MAX_LIMIT = 1000;
/** Reads of the data browser are interactive: they give up rather than hold a connection for minutes. */
const BROWSE_TIMEOUT_MS = 30_000;

export const dialectOf = (kind: string): Dialect => sourceKindInfo(kind as SourceKind).dialect;

/** `schema.table` quoted for the dialect; names have been checked against the source's own metadata first. */
function qualifiedTable(dialect: Dialect, t: Pick<TableInfo, 'schema' | 'name'>): string {
  return `${quoteIdentifier(dialect, t.schema)}.${quoteIdentifier(dialect, t.name)}`;
}

export function previewSql(dialect: Dialect, t: Pick<TableInfo, 'schema' | 'name'>, limit: number): string {
  // One row more than asked tells the connector whether there is more.
  return `SELECT * FROM ${qualifiedTable(dialect, t)} LIMIT ${Math.floor(limit) + 1}`;
}

/**
 * Distinct non-null values of a column, optionally those containing `search` (case-insensitive), in order.
 * The search text is a bound parameter, except on ClickHouse (no parameters there), where it is an escaped literal.
 */
export function columnValuesSql(
  dialect: Dialect,
  t: Pick<TableInfo, 'schema' | 'name'>,
  column: string,
  search: string | undefined,
  limit: number,
): { sql: string; params: unknown[] } {
  const c = quoteIdentifier(dialect, column);
  const conditions = [`${c} IS NOT NULL`];
  const params: unknown[] = [];
  if (search) {
    switch (dialect) {
      case 'postgresql':
        params.push(search);
        conditions.push(`strpos(lower(CAST(${c} AS text)), lower($1)) > 0`);
        break;
      case 'duckdb':
        params.push(search);
        conditions.push(`strpos(lower(CAST(${c} AS VARCHAR)), lower($1)) > 0`);
        break;
      case 'mysql':
        params.push(search);
        conditions.push(`LOCATE(LOWER(?), LOWER(CAST(${c} AS CHAR))) > 0`);
        break;
      case 'clickhouse':
        conditions.push(`positionCaseInsensitiveUTF8(toString(${c}), ${escapeLiteral('clickhouse', search)}) > 0`);
        break;
    }
  }
  const sql = `SELECT DISTINCT ${c} AS value FROM ${qualifiedTable(dialect, t)} WHERE ${conditions.join(' AND ')} ORDER BY ${c} LIMIT ${Math.floor(limit) + 1}`;
  return { sql, params };
}

export interface PreviewResult {
  schema: string;
  table: string;
  columns: ResultColumn[];
  rows: unknown[][];
  truncated: boolean;
  limit: number;
}

/*
 * Preview and column values read the source's rows as they are, outside any dataset: no RLS or CLS rule narrows
 * them, so only those who may edit the source run them (rawReadableObject); a reader reads through datasets.
 */
export async function previewTable(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { schema?: string; table: string; limit?: number },
): Promise<PreviewResult> {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'read', `просмотр ${input.schema ?? ''}.${input.table}`);
  const table = await resolveTable(deps, row, input.schema, input.table);
  const limit = input.limit ?? PREVIEW_DEFAULT_LIMIT;
  const dialect = dialectOf(row.type);
  const result = await viaConnector(() =>
    connectorForSource(deps, row).query(previewSql(dialect, table, limit), [], {
      limit,
      timeoutMs: BROWSE_TIMEOUT_MS,
      readOnly: true,
    }),
  );
  return {
    schema: table.schema,
    table: table.name,
    columns: result.columns,
    rows: result.rows,
    truncated: result.truncated,
    limit,
  };
}

export async function columnValues(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: { schema?: string; table: string; column: string; query?: string; limit?: number },
): Promise<{ column: string; values: unknown[]; truncated: boolean }> {
  const { row } = await rawReadableObject(deps.db, actor, 'data_source', id);
  await logSourceAccess(deps.db, id, actor, 'read', `значения ${input.schema ?? ''}.${input.table}.${input.column}`);
  const table = await resolveTable(deps, row, input.schema, input.table);
  const column = await resolveColumn(deps, row, table, input.column);
  const limit = input.limit ?? PREVIEW_DEFAULT_LIMIT;
  const { sql, params } = columnValuesSql(dialectOf(row.type), table, column.name, input.query || undefined, limit);
  const result = await viaConnector(() =>
    connectorForSource(deps, row).query(sql, params, { limit, timeoutMs: BROWSE_TIMEOUT_MS, readOnly: true }),
  );
  return { column: column.name, values: result.rows.map((r) => r[0]), truncated: result.truncated };
}

/**
 * Platform objects built on the source. Those the caller cannot read (no role in their workspace, no right on them) are counted, not shown: the
 * owner still learns why the source cannot be deleted without learning names they may not read.
 */
const idsOf = (objects: SourceObject[], type: SourceObject['type']) =>
  objects.filter((o) => o.type === type).map((o) => o.id);

export async function listSourceObjects(deps: AppDeps, actor: Actor, id: number) {
  await readableObject(deps.db, actor, 'data_source', id);
  const all = await sourceObjects(deps.db, id);
  const readable = {
    dataset: await readableIds(deps.db, actor, 'dataset', idsOf(all, 'dataset')),
    widget: await readableIds(deps.db, actor, 'widget', idsOf(all, 'widget')),
    dashboard: await readableIds(deps.db, actor, 'dashboard', idsOf(all, 'dashboard')),
  };
  const content = all.filter((o) => readable[o.type].has(o.id));
  return { content, hidden_count: all.length - content.length };
}
