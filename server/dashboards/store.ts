import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { dashboards } from '../../db/schema/dashboards';
import { COPY_MAP, ints, readCopyMap, type CopyTarget } from '../objects/copy-map';
import { layoutOf, referencedWidgetIds, remapWidgets, withoutWidget, type LayoutRefs } from './layout';
import { dashboardNotFound } from './messages';
import { fieldRefsById } from '../datasets/views';
import { widgetRefsById } from '../widgets/views';
import { recordRevisions } from '../revisions/store';

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
  for (const w of (await widgetRefsById(tx, widgetIds)).values())
    refs.widgets.set(w.id, { workspaceId: w.workspaceId, datasetId: w.datasetId });
  for (const f of (await fieldRefsById(tx, fieldIds)).values())
    refs.fields.set(f.id, { datasetId: f.datasetId, workspaceId: f.workspaceId });
  return refs;
}

/** How selectors name their fields in a filter: the field's name and its object's (null for a calculated field). */
export async function selectorFieldRefs(
  tx: DbOrTx,
  fieldIds: number[],
): Promise<Map<number, { name: string; objectName: string | null }>> {
  const out = new Map<number, { name: string; objectName: string | null }>();
  for (const f of (await fieldRefsById(tx, fieldIds)).values())
    out.set(f.id, { name: f.name, objectName: f.objectName });
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
  tx: Tx,
  widgetId: number,
  opts: { keepInWorkspace?: number; authorId?: number | null } = {},
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
  await recordRevisions(
    tx,
    'dashboard',
    rows.map((r) => r.id),
    'saved',
    opts.authorId ?? null,
  );
}

/** Every widget the layouts of these dashboards name (tiles, selectors, parameters): a deploy brings them along. */
export async function widgetIdsInLayouts(tx: DbOrTx, dashboardIds: number[]): Promise<number[]> {
  if (!dashboardIds.length) return [];
  const rows = await tx
    .select({ layout: dashboards.layout })
    .from(dashboards)
    .where(sql`${dashboards.id} = any(${ints(dashboardIds)})`);
  return [...new Set(rows.flatMap((r) => referencedWidgetIds(layoutOf(r.layout))))];
}

/**
 * Copies every dashboard of the copy map (server/objects/copy-map.ts) into `target`, one upsert: each layout points at
 * the copies the map has of the widgets it names (tiles, selectors, parameters) and of its selectors' dataset fields;
 * an id the map does not know stays (a copy in place without its widgets shows the original widgets). The map entries
 * the layouts need are read in one statement.
 */
export async function copyDashboards(tx: Tx, target: CopyTarget): Promise<void> {
  const originals = await tx.execute<{ id: number; layout: unknown }>(sql`
    select o.id, o.layout from ${COPY_MAP} m join dashboards o on o.id = m.old_id where m.kind = 'dashboard'`);
  if (!originals.rows.length) return;
  const layouts = originals.rows.map((r) => ({ id: r.id, layout: layoutOf(r.layout) }));
  const widgetIds = new Set(layouts.flatMap(({ layout }) => referencedWidgetIds(layout)));
  const fieldIds = new Set(layouts.flatMap(({ layout }) => layout.selectors.map((s) => s.field_id)));
  const copies = await readCopyMap(tx, { widget: [...widgetIds], dataset_field: [...fieldIds] });
  const rows = layouts.map(({ id, layout }) => {
    const remapped = remapWidgets(layout, (w) => copies.widget.get(w) ?? w);
    const selectors = remapped.selectors.map((s) => ({
      ...s,
      field_id: copies.dataset_field.get(s.field_id) ?? s.field_id,
    }));
    return { old_id: id, layout: { ...remapped, selectors } };
  });
  await tx.execute(sql`
    insert into dashboards (id, name, description, workspace_id, author_id, layout)
    select m.new_id, m.name, o.description, ${target.workspaceId}::int, ${target.authorId}::int, r.layout
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) r(old_id int, layout jsonb)
    join ${COPY_MAP} m on m.kind = 'dashboard' and m.old_id = r.old_id
    join dashboards o on o.id = r.old_id
    on conflict (id) do update set name = excluded.name, description = excluded.description,
      layout = excluded.layout, updated_at = now()`);
}

/**
 * Moves the given dashboards of workspace `from` to `to`, keeping their ids (POST /api/workspaces/{id}/transfer); answers
 * how many moved: one no longer in `from` stays where it is.
 */
export async function moveDashboardsToWorkspace(tx: DbOrTx, ids: number[], from: number, to: number): Promise<number> {
  if (ids.length === 0) return 0;
  const moved = await tx
    .update(dashboards)
    .set({ workspaceId: to })
    .where(and(eq(dashboards.workspaceId, from), inArray(dashboards.id, ids)))
    .returning({ id: dashboards.id });
  return moved.length;
}
