import { eq } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { dashboards } from '../../db/schema/dashboards';
import { layoutOf, referencedWidgetIds, widgetIdsOf } from './layout';
import type { DashboardRow } from './store';

/** A dashboard in lists and after create, update and copy. */
export function dashboardView(row: DashboardRow) {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type DashboardView = ReturnType<typeof dashboardView>;

/** GET /api/dashboard/{id}: the dashboard and the widgets its layout shows. */
export function dashboardDetails(row: DashboardRow) {
  return { ...dashboardView(row), widget_ids: widgetIdsOf(layoutOf(row.layout)) };
}
export type DashboardDetails = ReturnType<typeof dashboardDetails>;

/** GET and PUT /api/dashboard/{id}/schema: the whole layout and the edit time it was saved at. */
export function dashboardSchemaView(row: DashboardRow) {
  return { id: row.id, ...layoutOf(row.layout), updated_at: row.updatedAt.toISOString() };
}
export type DashboardSchemaView = ReturnType<typeof dashboardSchemaView>;

/** What other areas may join of a dashboard (a share link shows its dashboard's name), in their one query. */
export const dashboardRef = (alias = 'dashboard_ref') =>
  new QueryBuilder().select({ id: dashboards.id, name: dashboards.name }).from(dashboards).as(alias);

/** The dashboards of a workspace with every widget their layouts name (tiles, selectors, parameters). */
export async function dashboardsInWorkspace(
  db: DbOrTx,
  workspaceId: number,
): Promise<{ id: number; name: string; widgetIds: number[] }[]> {
  const rows = await db
    .select({ id: dashboards.id, name: dashboards.name, layout: dashboards.layout })
    .from(dashboards)
    .where(eq(dashboards.workspaceId, workspaceId));
  return rows.map((d) => ({ id: d.id, name: d.name, widgetIds: referencedWidgetIds(layoutOf(d.layout)) }));
}
