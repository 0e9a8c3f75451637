import { eq } from 'drizzle-orm';
import { dashboards } from '../../db/schema/dashboards';
import type { Actor } from '../auth/actor';
import { deletableObject, ownedObject, readableObject } from '../access/object-access';
import { assertWorkspaceEditable } from '../access/workspace-access';
import type { AppDeps } from '../app/deps';
import { badRequest, invalid } from '../kernel/errors';
import type { PageRequest } from '../kernel/paging';
import { readCachesChanged } from '../kernel/read-epoch';
import { mapCopyOf, mapObjects } from '../objects/copy-map';
import { copyWidgets } from '../widgets/store';
import { listObjects, type StdListFilter } from '../objects/list';
import { recordRevisions } from '../revisions/store';
import { layoutOf, layoutProblems, referencedWidgetIds, widgetIdsOf, type DashboardLayout } from './layout';
import {
  copyDashboards,
  insertDashboard,
  layoutRefs,
  loadFullDashboard,
  lockWorkspaceLayouts,
  updateDashboard,
} from './store';
import {
  dashboardDetails,
  dashboardSchemaView,
  dashboardView,
  type DashboardDetails,
  type DashboardSchemaView,
  type DashboardView,
} from './views';

export const DASHBOARD_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at'] as const;

export interface DashboardInput {
  name: string;
  description?: string;
  workspace_id: number;
}

export interface DashboardUpdate {
  name: string;
  description?: string;
}

export interface DashboardCopyInput {
  name?: string;
  workspace_id?: number;
  copy_widgets: boolean;
}

/** GET /api/dashboard: the std list; dashboards have no kind, so `type` is not taken. */
export async function listDashboards(deps: AppDeps, actor: Actor, input: PageRequest & StdListFilter) {
  return listObjects(deps.db, actor, 'dashboard', input, { sort: { fields: DASHBOARD_SORT_FIELDS } }, (items) =>
    items.map(({ row }) => dashboardView(row)),
  );
}

/** An empty dashboard, by anyone who may create objects in the workspace (Редактор or Администратор there). */
export async function createDashboard(deps: AppDeps, actor: Actor, input: DashboardInput): Promise<DashboardView> {
  await assertWorkspaceEditable(deps.db, actor, input.workspace_id);
  const row = await deps.db.transaction(async (tx) => {
    const created = await insertDashboard(tx, {
      name: input.name,
      description: input.description ?? '',
      workspaceId: input.workspace_id,
      authorId: actor.userId,
    });
    await recordRevisions(tx, 'dashboard', [created.id], 'created', actor.userId);
    return created;
  });
  return dashboardView(row);
}

export async function getDashboard(deps: AppDeps, actor: Actor, id: number): Promise<DashboardDetails> {
  return dashboardDetails((await readableObject(deps.db, actor, 'dashboard', id)).row);
}

/** Renames or describes (a description left out is kept). Any save updates updated_at. */
export async function updateDashboardInfo(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: DashboardUpdate,
): Promise<DashboardView> {
  const row = await deps.db.transaction(async (tx) => {
    await ownedObject(tx, actor, 'dashboard', id, { forUpdate: true });
    const updated = await updateDashboard(tx, id, {
      name: input.name,
      ...(input.description !== undefined ? { description: input.description } : {}),
    });
    await recordRevisions(tx, 'dashboard', [id], 'saved', actor.userId);
    return updated;
  });
  return dashboardView(row);
}

export async function deleteDashboard(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  await deps.db
    .transaction(async (tx) => {
      // The owner by role (an edit right does not delete); the dashboard's rights go with it.
      await deletableObject(tx, actor, 'dashboard', id);
      await tx.delete(dashboards).where(eq(dashboards.id, id));
    })
    .finally(() => readCachesChanged(deps)); // dashboard data reads cache the layout
  return { id, deleted: true };
}

export async function getDashboardSchema(deps: AppDeps, actor: Actor, id: number): Promise<DashboardSchemaView> {
  return dashboardSchemaView((await readableObject(deps.db, actor, 'dashboard', id)).row);
}

/**
 * Replaces the whole layout (what is omitted is deleted). Every widget and field it names must be of the dashboard's
 * own workspace: else a 422 naming each bad path, and nothing is saved.
 */
export async function saveDashboardSchema(
  deps: AppDeps,
  actor: Actor,
  id: number,
  layout: DashboardLayout,
): Promise<DashboardSchemaView> {
  return deps.db
    .transaction(async (tx) => {
      const { row: current } = await ownedObject(tx, actor, 'dashboard', id);
      await lockWorkspaceLayouts(tx, current.workspaceId);
      const { row } = await ownedObject(tx, actor, 'dashboard', id, { forUpdate: true });
      const refs = await layoutRefs(
        tx,
        referencedWidgetIds(layout),
        layout.selectors.map((s) => s.field_id),
      );
      const problems = layoutProblems(layout, row.workspaceId, refs);
      if (Object.keys(problems).length) throw invalid(problems);
      const saved = await updateDashboard(tx, id, { layout });
      await recordRevisions(tx, 'dashboard', [id], 'saved', actor.userId);
      return dashboardSchemaView(saved);
    })
    .finally(() => readCachesChanged(deps));
}

/**
 * A copy of the dashboard (owner only) in the given workspace (default: its own), where the caller must be able to
 * create objects. Widgets live beside their datasets, so a layout that names widgets or fields is copied only within
 * its workspace; `copy_widgets` clones the tiles' widgets as well, and the copy shows the clones.
 */
export async function copyDashboard(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: DashboardCopyInput,
): Promise<DashboardView> {
  const { row } = await ownedObject(deps.db, actor, 'dashboard', id);
  const workspaceId = input.workspace_id ?? row.workspaceId;
  await assertWorkspaceEditable(deps.db, actor, workspaceId);
  const layout = layoutOf(row.layout);
  if (workspaceId !== row.workspaceId && (layout.items.length || layout.selectors.length))
    throw badRequest(
      'Дашборд с виджетами копируется только в своё рабочее пространство: виджеты живут там же, где их датасеты',
    );
  const copy = await deps.db
    .transaction(async (tx) => {
      const target = { workspaceId, authorId: actor.userId };
      const copyId = await mapCopyOf(tx, 'dashboard', id, input.name ?? `${row.name} (копия)`);
      // With copy_widgets the tiles' widgets are copied too (each once, on their datasets) and the copy shows them.
      if (input.copy_widgets) {
        const { layout: current } = await loadFullDashboard(tx, id);
        const widgetCopies = await mapObjects(tx, 'widget', widgetIdsOf(layoutOf(current)));
        await copyWidgets(tx, target);
        await recordRevisions(tx, 'widget', [...widgetCopies.values()], 'created', actor.userId);
      }
      await copyDashboards(tx, target);
      await recordRevisions(tx, 'dashboard', [copyId], 'created', actor.userId);
      return loadFullDashboard(tx, copyId);
    })
    .finally(() => readCachesChanged(deps));
  return dashboardView(copy);
}
