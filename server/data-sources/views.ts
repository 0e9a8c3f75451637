import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { SourceSettings } from '../../adapters/sources';
import type { DbOrTx } from '../../db/client';
import { dataSources } from '../../db/schema/data-sources';
import type { AppDeps } from '../app/deps';
import { SOURCE_KIND_LABELS } from '../service/dictionary';
import { userNamesById, type UserName } from '../users/views';
import { openSecrets, type DataSourceRow } from './connection';
import type { SourceSecrets } from './secrets';
import { settingsView } from './settings';

export type AuthorRef = UserName;

export interface DataSourceView {
  id: number;
  uuid: string;
  name: string;
  type: string;
  type_name: string;
  workspace_id: number;
  settings: Record<string, unknown>;
  author: AuthorRef | null;
  /** Whether the caller may change, delete or query it (see access.ts). */
  can_edit: boolean;
  created_at: string;
  updated_at: string;
}

function secretsForView(deps: AppDeps, row: DataSourceRow): SourceSecrets {
  try {
    return openSecrets(deps, row);
  } catch {
    return {};
  }
}

export function dataSourceView(
  deps: AppDeps,
  row: DataSourceRow,
  author: AuthorRef | null,
  canEdit: boolean,
): DataSourceView {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    type: row.type,
    type_name: SOURCE_KIND_LABELS[row.type] ?? row.type,
    workspace_id: row.workspaceId,
    settings: settingsView(
      row.type,
      row.settings as SourceSettings & Record<string, unknown>,
      secretsForView(deps, row),
    ),
    author,
    can_edit: canEdit,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Usernames of the given authors, for the `author` of views (one query). */
export const authorsById = (db: DbOrTx, ids: (number | null)[]): Promise<Map<number, AuthorRef>> =>
  userNamesById(db, ids);

export async function authorOf(db: DbOrTx, id: number | null): Promise<AuthorRef | null> {
  if (id === null) return null;
  return (await userNamesById(db, [id])).get(id) ?? null;
}

/*
 * What other areas read of data sources: whole rows by id or workspace (the query layer connects with them, the
 * dataset tools read their catalogues, pipelines' substitution rules take their settings), and the pieces their own
 * single queries join.
 */

/** The rows of the given sources, sealed secrets included; an id that is no source is absent. */
export async function sourcesByIds(db: DbOrTx, ids: readonly number[]): Promise<DataSourceRow[]> {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(dataSources)
    .where(inArray(dataSources.id, [...new Set(ids)]));
}

/** The sources of a workspace, by name. */
export async function sourcesInWorkspace(db: DbOrTx, workspaceId: number): Promise<DataSourceRow[]> {
  return db
    .select()
    .from(dataSources)
    .where(eq(dataSources.workspaceId, workspaceId))
    .orderBy(asc(dataSources.name), asc(dataSources.id));
}

/** The source with the stable code `uuid` in the workspace, if it is there. */
export async function sourceInWorkspaceByUuid(
  db: DbOrTx,
  workspaceId: number,
  uuid: string,
): Promise<DataSourceRow | undefined> {
  const [row] = await db
    .select()
    .from(dataSources)
    .where(and(eq(dataSources.workspaceId, workspaceId), eq(dataSources.uuid, uuid)));
  return row;
}

/** What other areas may join of a source (a dataset's dependencies list its sources): never settings or secrets. */
export const sourceRef = (alias = 'source_ref') =>
  new QueryBuilder()
    .select({
      id: dataSources.id,
      name: dataSources.name,
      type: dataSources.type,
      workspaceId: dataSources.workspaceId,
    })
    .from(dataSources)
    .as(alias);

/** A source row as `sourceRowsJsonSql` carries it (json keys are the column names). */
export interface SourceRowJson {
  id: number;
  uuid: string;
  name: string;
  type: string;
  workspace_id: number;
  author_id: number | null;
  settings: unknown;
  secrets: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * SQL: the whole rows of the sources whose ids `ids` (a subquery of the caller's statement) yields, as one json array,
 * so a statement that needs a widget and its sources reads them in one round trip (server/widgets/widget-load.ts).
 */
export const sourceRowsJsonSql = (ids: SQL) =>
  sql<SourceRowJson[]>`(select coalesce(json_agg(row_to_json(${sql.identifier('src')}.*)), '[]'::json)
    from ${dataSources} as ${sql.identifier('src')} where ${sql.identifier('src')}.${sql.identifier('id')} in ${ids})`;

export const sourceRowOfJson = (r: SourceRowJson): DataSourceRow => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  type: r.type,
  workspaceId: r.workspace_id,
  authorId: r.author_id,
  settings: r.settings,
  secrets: r.secrets,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});
