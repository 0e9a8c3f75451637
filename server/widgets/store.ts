import { eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import { mapped, type CloneTarget, type IdMap } from '../objects/id-map';
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

/**
 * A copy of the widget in `target` on the dataset the id map gives (the same one when its dataset was not cloned in
 * this run). The shelves name dataset fields by object and field name, not by id, so the configuration is kept as it
 * is. Records old -> new in `idMap` and answers the new id. A widget lives where its dataset does (widgets.ts saves it
 * so): a deploy clones the dataset into the same target first, or targets the workspace of the dataset it keeps.
 */
export async function cloneWidget(tx: Tx, id: number, target: CloneTarget, idMap: IdMap): Promise<number> {
  const row = await loadFullWidget(tx, id);
  const copy = await insertWidget(tx, {
    name: target.name ?? row.name,
    type: row.type,
    datasetId: mapped(idMap.datasets, row.datasetId),
    workspaceId: target.workspaceId,
    authorId: target.authorId,
    config: row.config,
  });
  idMap.widgets.set(id, copy.id);
  return copy.id;
}
