import { and, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import { COPY_MAP, ints, type CopyTarget } from '../objects/copy-map';
import { widgetNotFound } from '../objects/kinds';
import type { WidgetRow } from './views';

/*
 * The widgets' writes and full reads: transaction first, no actor, no access checks (widgets.ts decides who may and
 * checks the configuration compiles), never a transaction of their own, so that a deploy can compose them with the
 * other areas' stores in one transaction.
 */

export type WidgetInsert = typeof widgets.$inferInsert;
export type WidgetPatch = Partial<Pick<WidgetInsert, 'name' | 'type' | 'datasetId' | 'workspaceId' | 'config'>>;

export async function insertWidget(tx: DbOrTx, values: WidgetInsert): Promise<WidgetRow> {
  const [row] = await tx.insert(widgets).values(values).returning();
  return row;
}

/** Any save moves updated_at, even one that changes nothing: pipelines compare by edit time. 404 if missing. */
export async function updateWidget(tx: DbOrTx, id: number, patch: WidgetPatch): Promise<WidgetRow> {
  const [row] = await tx
    .update(widgets)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(widgets.id, id))
    .returning();
  if (!row) throw widgetNotFound(id);
  return row;
}

/** The whole row, configuration included. 404 if missing. */
export async function loadFullWidget(tx: DbOrTx, id: number): Promise<WidgetRow> {
  const [row] = await tx.select().from(widgets).where(eq(widgets.id, id));
  if (!row) throw widgetNotFound(id);
  return row;
}

/** The widgets among `ids` that are in the workspace, with their datasets (a deploy brings a widget's dataset along). */
export async function widgetsWithDatasets(
  tx: DbOrTx,
  workspaceId: number,
  ids: number[],
): Promise<{ id: number; datasetId: number }[]> {
  if (!ids.length) return [];
  return tx
    .select({ id: widgets.id, datasetId: widgets.datasetId })
    .from(widgets)
    .where(and(eq(widgets.workspaceId, workspaceId), sql`${widgets.id} = any(${ints(ids)})`));
}

/**
 * Copies every widget of the copy map (server/objects/copy-map.ts) into `target`, one upsert: each copy on its
 * dataset's copy when the map has one, else on the same dataset. The shelves name dataset fields by object and field
 * name, not by id, so the configuration travels as it is. A widget lives where its dataset does (widgets.ts saves it
 * so): a deploy copies the dataset into the same target first, a copy in place keeps it.
 */
export async function copyWidgets(tx: Tx, target: CopyTarget): Promise<void> {
  await tx.execute(sql`
    insert into widgets (id, name, type, dataset_id, workspace_id, author_id, config)
    select m.new_id, m.name, o.type, coalesce(dm.new_id, o.dataset_id), ${target.workspaceId}::int,
      ${target.authorId}::int, o.config
    from ${COPY_MAP} m join widgets o on o.id = m.old_id
    left join ${COPY_MAP} dm on dm.kind = 'dataset' and dm.old_id = o.dataset_id
    where m.kind = 'widget'
    on conflict (id) do update set name = excluded.name, type = excluded.type, dataset_id = excluded.dataset_id,
      config = excluded.config, updated_at = now()`);
}

/**
 * Moves the given widgets of workspace `from` to `to`, keeping their ids (POST /api/workspaces/{id}/transfer); answers
 * how many moved: one no longer in `from` stays where it is.
 */
export async function moveWidgetsToWorkspace(tx: DbOrTx, ids: number[], from: number, to: number): Promise<number> {
  if (ids.length === 0) return 0;
  const moved = await tx
    .update(widgets)
    .set({ workspaceId: to })
    .where(and(eq(widgets.workspaceId, from), inArray(widgets.id, ids)))
    .returning({ id: widgets.id });
  return moved.length;
}
