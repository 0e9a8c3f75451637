import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import {
  accessOfRank,
  readableByRank,
  rightRankInSql,
  roleRankInSql,
  type ObjectAccess,
} from '../access/object-access';
import type { DatasetOwnerRef } from '../access/source-rights';
import { PREPARED_CALLER, actorRoleRankSql, preparedCallerParams } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { OBJECT_KINDS, type ObjectRow } from '../objects/kinds';
import { sourceRowOfJson, sourceRowsJsonSql } from '../data-sources/views';
import { datasetRef, sourceIdsOfDatasetSql } from '../datasets/views';
import { cacheSlot } from '../kernel/app-caches';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';

export interface WidgetForData extends ObjectAccess<'widget'> {
  dataset: DatasetOwnerRef;
  /** Whether the caller reads the widget's dataset itself (not only this widget): see saved-reads.ts. */
  datasetReadable: boolean;
  sources: ObjectRow<'data_source'>[];
}

/**
 * The query behind loadWidgetForData, prepared once per app (for its deps.db): its text never changes (the caller is
 * the statement's parameters, PREPARED_CALLER), so PostgreSQL plans it once per connection instead of on every data
 * request. Beside the caller's standing on the widget it selects their standing on the widget's dataset (role in
 * its workspace, right on it), so the check of a request shaped beyond the saved widget (saved-reads.ts) needs no
 * query of its own. One statement over the tables of three areas: the dataset joins the datasetRef subquery and the sources
 * come as the json array sourceRowsJsonSql builds over sourceIdsOfDatasetSql, pieces the datasets and data-sources
 * areas offer, so neither table family is read here.
 */
function prepare(db: Db) {
  const datasets = datasetRef();
  const sources = sourceRowsJsonSql(sourceIdsOfDatasetSql(widgets.datasetId));
  return db
    .select({
      row: widgets,
      version: datasets.version,
      workspaceId: datasets.workspaceId,
      authorId: datasets.authorId,
      rank: roleRankInSql(PREPARED_CALLER, 'widget'),
      right: rightRankInSql(PREPARED_CALLER, 'widget'),
      datasetRank: actorRoleRankSql(PREPARED_CALLER, sql`${datasets.workspaceId}`),
      datasetRight: rightRankInSql(PREPARED_CALLER, 'dataset', widgets.datasetId),
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
 * the widget (object_rights), whether they read the dataset, the dataset's version (the model itself is cached per version) and the dataset's data
 * sources. ONE metadata query, and none while the answer is cached: per caller under the read epoch, which every
 * write that could change it bumps (AppDeps.caches.readEpoch), so removing the caller from the workspace, or their
 * right, stops their reads at once on this node.
 * 404 «Виджет не найден (id …)» when it does not exist or the caller may not read it.
 */
export function loadWidgetForData(
  deps: AppDeps,
  actor: Actor,
  widgetId: number,
): WidgetForData | Promise<WidgetForData> {
  const key = `${deps.caches.readEpoch.value}:${widgetId}:${actor.userId}:${actor.isSysadmin}:${actor.groupIds.join(',')}`;
  // A hit is answered as it is, not in a promise (the hot path); a miss is single-flight, so the readers of one
  // widget arriving as its entry expires share one query.
  return deps.caches.of(widgetReads).getOrLoadNow(key, () => queryWidgetForData(deps, actor, widgetId));
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
    datasetReadable: readableByRank(actor, found.datasetRank, found.datasetRight),
    sources: found.sources.map(sourceRowOfJson),
  };
}
