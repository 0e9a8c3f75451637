import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { dashboards } from '../../db/schema/dashboards';
import { datasetFields, datasetObjects, datasets } from '../../db/schema/datasets';
import { widgets } from '../../db/schema/widgets';
import { mapped, type CloneTarget, type IdMap } from '../objects/id-map';
import { cloneWidget } from '../widgets/store';
import { layoutOf, remapWidgets, withoutWidget, type DashboardLayout, type LayoutRefs } from './layout';
import { dashboardNotFound } from './messages';

/*
 * The dashboards' writes and full reads: transaction first, no actor, no access checks (dashboards.ts decides who may
 * and checks the layout), never a transaction of their own, so that a deploy can compose them with the other areas'
 * stores in one transaction.
 */

export type DashboardRow = typeof dashboards.$inferSelect;
export type DashboardInsert = typeof dashboards.$inferInsert;
export type DashboardPatch = Partial<Pick<DashboardInsert, 'name' | 'description' | 'layout'>>;

export async function insertDashboard(tx: DbOrTx, values: DashboardInsert): Promise<DashboardRow> {
  const [row] = await tx.insert(dashboards).values(values).returning();
  return row;
}

/** Any save moves updated_at, even one that changes nothing: pipelines compare by edit time. 404 if missing. */
export async function updateDashboard(tx: DbOrTx, id: number, patch: DashboardPatch): Promise<DashboardRow> {
  const [row] = await tx
    .update(dashboards)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(dashboards.id, id))
    .returning();
  if (!row) throw dashboardNotFound(id);
  return row;
}

/** The whole row, layout included. 404 if missing. */
export async function loadFullDashboard(tx: DbOrTx, id: number): Promise<DashboardRow> {
  const [row] = await tx.select().from(dashboards).where(eq(dashboards.id, id));
  if (!row) throw dashboardNotFound(id);
  return row;
}

/** The widgets and dataset fields a layout names, as they are in the database (for layoutProblems). */
export async function layoutRefs(tx: DbOrTx, widgetIds: number[], fieldIds: number[]): Promise<LayoutRefs> {
  const refs: LayoutRefs = { widgets: new Map(), fields: new Map() };
  if (widgetIds.length) {
    const rows = await tx
      .select({ id: widgets.id, workspaceId: widgets.workspaceId, datasetId: widgets.datasetId })
      .from(widgets)
      .where(inArray(widgets.id, widgetIds));
    for (const r of rows) refs.widgets.set(r.id, { workspaceId: r.workspaceId, datasetId: r.datasetId });
  }
  if (fieldIds.length) {
    const rows = await tx
      .select({ id: datasetFields.id, datasetId: datasetFields.datasetId, workspaceId: datasets.workspaceId })
      .from(datasetFields)
      .innerJoin(datasets, eq(datasets.id, datasetFields.datasetId))
      .where(inArray(datasetFields.id, fieldIds));
    for (const r of rows) refs.fields.set(r.id, { datasetId: r.datasetId, workspaceId: r.workspaceId });
  }
  return refs;
}

/** How selectors name their fields in a filter: the field's name and its object's (null for a calculated field). */
export async function selectorFieldRefs(
  tx: DbOrTx,
  fieldIds: number[],
): Promise<Map<number, { name: string; objectName: string | null }>> {
  const out = new Map<number, { name: string; objectName: string | null }>();
  if (!fieldIds.length) return out;
  const rows = await tx
    .select({ id: datasetFields.id, name: datasetFields.name, objectName: datasetObjects.name })
    .from(datasetFields)
    .leftJoin(datasetObjects, eq(datasetObjects.id, datasetFields.objectId))
    .where(inArray(datasetFields.id, [...new Set(fieldIds)]));
  for (const r of rows) out.set(r.id, { name: r.name, objectName: r.objectName });
  return out;
}

/** SQL: the dashboard's layout names one of the widgets (a tile, or a selector or parameter driving it). */
function namesAnyWidget(widgetIds: number[]) {
  const ids = sql.join(
    widgetIds.map((id) => sql`${id}`),
    sql`, `,
  );
  return sql`exists (
    select 1 from jsonb_array_elements(coalesce(${dashboards.layout}->'items', '[]'::jsonb)) as item
    where (item->>'widget_id')::int in (${ids})
    union all
    select 1 from jsonb_array_elements(coalesce(${dashboards.layout}->'selectors', '[]'::jsonb)
      || coalesce(${dashboards.layout}->'parameters', '[]'::jsonb)) as control,
      jsonb_array_elements(coalesce(control->'widget_ids', '[]'::jsonb)) as driven
    where (driven #>> '{}')::int in (${ids}))`;
}

/** Dashboards whose layout names any of the widgets (dependents lists). */
export async function dashboardsNamingWidgets(
  tx: DbOrTx,
  widgetIds: number[],
): Promise<{ id: number; name: string; workspaceId: number }[]> {
  if (!widgetIds.length) return [];
  return tx
    .select({ id: dashboards.id, name: dashboards.name, workspaceId: dashboards.workspaceId })
    .from(dashboards)
    .where(namesAnyWidget(widgetIds))
    .orderBy(asc(dashboards.name), asc(dashboards.id));
}

/**
 * Serialises the changes of which widgets a workspace's layouts name: a layout save (PUT /api/dashboard/{id}/schema)
 * against a widget's delete or move. Without it a save that checked a widget still there could commit after the
 * delete had cleaned the layouts, and the layout would name a widget that is gone. A layout names widgets of its own
 * workspace only, so the workspace is the key. Take it before any dashboard row lock (the delete locks the layouts
 * after it), so the two never wait on each other in opposite orders.
 */
export async function lockWorkspaceLayouts(tx: DbOrTx, workspaceId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${'layouts:' + workspaceId}))`);
}

/**
 * Takes a widget out of every layout that names it (the widget is being deleted, or moved to another workspace): its tiles go, selectors and
 * parameters stop driving it. Each changed dashboard is a save, so its edit time moves.
 */
export async function dropWidgetFromLayouts(
  tx: DbOrTx,
  widgetId: number,
  opts: { keepInWorkspace?: number } = {},
): Promise<void> {
  // keepInWorkspace: the widget moved there, so only layouts of other workspaces lose it (a layout shows widgets of
  // its own workspace only).
  const where =
    opts.keepInWorkspace === undefined
      ? namesAnyWidget([widgetId])
      : and(namesAnyWidget([widgetId]), ne(dashboards.workspaceId, opts.keepInWorkspace));
  const rows = await tx
    .select({ id: dashboards.id, layout: dashboards.layout })
    .from(dashboards)
    .where(where)
    .for('update');
  for (const row of rows) await updateDashboard(tx, row.id, { layout: withoutWidget(layoutOf(row.layout), widgetId) });
}

/**
 * A copy of the dashboard in `target`. With `copyWidgets` its tiles' widgets are cloned too (each once, into the
 * same target; they keep their datasets unless the id map cloned those) and the copy's layout points at the clones;
 * without, the layout keeps naming the original widgets (an id the map does not know stays as it is). Records
 * old -> new in `idMap` and answers the new id.
 */
export async function cloneDashboard(
  tx: Tx,
  id: number,
  target: CloneTarget & { copyWidgets?: boolean },
  idMap: IdMap,
): Promise<number> {
  const row = await loadFullDashboard(tx, id);
  const layout: DashboardLayout = layoutOf(row.layout);
  if (target.copyWidgets) {
    for (const widgetId of layout.items.map((i) => i.widget_id))
      if (!idMap.widgets.has(widgetId))
        await cloneWidget(tx, widgetId, { workspaceId: target.workspaceId, authorId: target.authorId }, idMap);
  }
  const copy = await insertDashboard(tx, {
    name: target.name ?? row.name,
    description: row.description,
    workspaceId: target.workspaceId,
    authorId: target.authorId,
    layout: remapWidgets(layout, (w) => mapped(idMap.widgets, w)),
  });
  idMap.dashboards.set(id, copy.id);
  return copy.id;
}
