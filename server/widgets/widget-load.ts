import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { dataSources, datasetSources, datasets, widgets, workspaceMembers } from '../../db/schema';
import type { Actor } from '../auth/actor';
import type { DataSourceRow } from '../data-sources/connection';
import type { DatasetOwnerRef } from '../datasets/access';
import type { AppDeps } from '../app/deps';
import { WORKSPACE_ROLES, roleOfRank, roleRank } from '../workspaces/roles';
import { widgetNotFound, type WidgetAccess } from './views';

export interface WidgetForData extends WidgetAccess {
  dataset: DatasetOwnerRef;
  sources: DataSourceRow[];
}

interface SourceJson {
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

const ROLE_RANK = sql.join(
  WORKSPACE_ROLES.map((r) => sql`when ${r} then ${sql.raw(String(roleRank(r)))}`),
  sql` `,
);
const id = (name: string) => sql.identifier(name);

/**
 * The query behind loadWidgetForData, prepared once per database handle: its text never changes (the caller's
 * groups are one array parameter), so PostgreSQL plans it once per connection instead of on every data request.
 */
function prepare(db: Db) {
  const member = sql`(select max(case ${id('wm')}.${id('role')} ${ROLE_RANK} end)
    from ${workspaceMembers} as ${id('wm')}
    where ${id('wm')}.${id('workspace_id')} = ${id('widgets')}.${id('workspace_id')}
      and (${id('wm')}.${id('user_id')} = ${sql.placeholder('userId')}
        or ${id('wm')}.${id('group_id')} = any(cast(${sql.placeholder('groupIds')} as integer[]))))`;
  const sources = sql<SourceJson[]>`(select coalesce(json_agg(row_to_json(${id('src')}.*)), '[]'::json)
    from ${dataSources} as ${id('src')}
    where ${id('src')}.${id('id')} in (select ${id('ds')}.${id('data_source_id')} from ${datasetSources} as ${id('ds')}
      where ${id('ds')}.${id('dataset_id')} = ${id('widgets')}.${id('dataset_id')}))`;
  return db
    .select({ row: widgets, version: datasets.version, workspaceId: datasets.workspaceId, authorId: datasets.authorId, rank: sql<number | null>`${member}`, sources })
    .from(widgets)
    .innerJoin(datasets, eq(datasets.id, widgets.datasetId))
    .where(eq(widgets.id, sql.placeholder('id')))
    .prepare('widget_for_data');
}

const statements = new WeakMap<Db, ReturnType<typeof prepare>>();

/**
 * Everything a data request needs before it can compile: the widget, the caller's role in its workspace, the
 * dataset's version (the model itself is cached per version) and the dataset's data sources. ONE metadata query, and
 * none while the answer is cached: per caller under the read epoch, which every write that could change it bumps
 * (AppDeps.caches.readEpoch), so removing the caller from the workspace stops their reads at once on this node.
 * 404 «Виджет не найден (id …)» when it does not exist or its workspace is not readable.
 */
export async function loadWidgetForData(deps: AppDeps, actor: Actor, widgetId: number): Promise<WidgetForData> {
  const key = `${deps.caches.readEpoch.value}:${widgetId}:${actor.userId}:${actor.isSysadmin}:${actor.groupIds.join(',')}`;
  const hit = deps.caches.widgetReads.get(key);
  if (hit) return hit;
  const found = await queryWidgetForData(deps.db, actor, widgetId);
  deps.caches.widgetReads.set(key, found);
  return found;
}

async function queryWidgetForData(db: Db, actor: Actor, widgetId: number): Promise<WidgetForData> {
  let statement = statements.get(db);
  if (!statement) statements.set(db, (statement = prepare(db)));
  const [found] = await statement.execute({ id: widgetId, userId: actor.userId, groupIds: actor.groupIds });
  if (!found) throw widgetNotFound(widgetId);
  const role = roleOfRank(found.rank);
  if (!role && !actor.isSysadmin) throw widgetNotFound(widgetId);
  return {
    row: found.row,
    role,
    dataset: { id: found.row.datasetId, version: found.version, workspaceId: found.workspaceId, authorId: found.authorId },
    sources: found.sources.map((r) => ({
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
    })),
  };
}
