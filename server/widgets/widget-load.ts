import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { dataSources } from '../../db/schema/data-sources';
import { datasetSources, datasets } from '../../db/schema/datasets';
import { widgets } from '../../db/schema/widgets';
import { accessOfRank, rightRankInSql, roleRankInSql, type ObjectAccess } from '../access/object-access';
import type { DatasetOwnerRef } from '../access/source-rights';
import { PREPARED_CALLER, preparedCallerParams } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { OBJECT_KINDS, type ObjectRow } from '../objects/kinds';
import { cacheSlot } from '../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';

export interface WidgetForData extends ObjectAccess<'widget'> {
  dataset: DatasetOwnerRef;
  sources: ObjectRow<'data_source'>[];
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

const id = (name: string) => sql.identifier(name);

/**
 * The query behind loadWidgetForData, prepared once per app (for its deps.db): its text never changes (the caller is
 * the statement's parameters, PREPARED_CALLER), so PostgreSQL plans it once per connection instead of on every data
 * request.
 */
function prepare(db: Db) {
  const sources = sql<SourceJson[]>`(select coalesce(json_agg(row_to_json(${id('src')}.*)), '[]'::json)
    from ${dataSources} as ${id('src')}
    where ${id('src')}.${id('id')} in (select ${id('ds')}.${id('data_source_id')} from ${datasetSources} as ${id('ds')}
      where ${id('ds')}.${id('dataset_id')} = ${id('widgets')}.${id('dataset_id')}))`;
  return db
    .select({
      row: widgets,
      version: datasets.version,
      workspaceId: datasets.workspaceId,
      authorId: datasets.authorId,
      rank: roleRankInSql(PREPARED_CALLER, 'widget'),
      right: rightRankInSql(PREPARED_CALLER, 'widget'),
      sources,
    })
    .from(widgets)
    .innerJoin(datasets, eq(datasets.id, widgets.datasetId))
    .where(eq(widgets.id, sql.placeholder('id')))
    .prepare('widget_for_data');
}

/** The prepared statement, made on first use per app (it belongs to deps.db). */
const statements = cacheSlot('widgets.forDataStatement', () => ({}) as { statement?: ReturnType<typeof prepare> });
/** What a data request needs of a widget, per caller and read epoch (loadWidgetForData). */
const widgetReads = cacheSlot('widgets.reads', () => new TtlCache<string, WidgetForData>(READ_DECISION_TTL_MS));

/**
 * Everything a data request needs before it can compile: the widget, the caller's role in its workspace and right on
 * the widget (object_rights), the dataset's version (the model itself is cached per version) and the dataset's data
 * sources. ONE metadata query, and none while the answer is cached: per caller under the read epoch, which every
 * write that could change it bumps (AppDeps.caches.readEpoch), so removing the caller from the workspace, or their
 * right, stops their reads at once on this node.
 * 404 «Виджет не найден (id …)» when it does not exist or the caller may not read it.
 */
export async function loadWidgetForData(deps: AppDeps, actor: Actor, widgetId: number): Promise<WidgetForData> {
  const key = `${deps.caches.readEpoch.value}:${widgetId}:${actor.userId}:${actor.isSysadmin}:${actor.groupIds.join(',')}`;
  // A hit answers without an await (the hot path); a miss is single-flight, so the readers of one widget arriving as
  // its entry expires share one query.
  const hit = deps.caches.of(widgetReads).get(key);
  if (hit) return hit;
  return deps.caches.of(widgetReads).getOrLoad(key, () => queryWidgetForData(deps, actor, widgetId));
}

async function queryWidgetForData(deps: AppDeps, actor: Actor, widgetId: number): Promise<WidgetForData> {
  const slot = deps.caches.of(statements);
  slot.statement ??= prepare(deps.db);
  const [found] = await slot.statement.execute({ id: widgetId, ...preparedCallerParams(actor) });
  if (!found) throw OBJECT_KINDS.widget.notFound(widgetId);
  return {
    ...accessOfRank(actor, 'widget', found.row, found.rank, found.right),
    dataset: {
      id: found.row.datasetId,
      version: found.version,
      workspaceId: found.workspaceId,
      authorId: found.authorId,
    },
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
