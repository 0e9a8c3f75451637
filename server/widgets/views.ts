import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { widgets } from '../../db/schema';
import { workspaceRoleOf } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import { AppError, notFound } from '../kernel/errors';
import type { CalculatedFieldDef, FilterSpec, ShelfField, SortSpec } from '../query/compile/types';
import { roleAllowsEdit, roleIsAdmin, type WorkspaceRole } from '../workspaces/roles';

export type WidgetRow = typeof widgets.$inferSelect;

/** What a widget saves besides its name, kind and dataset: the shelves and their companions, as the wire has them. */
export interface WidgetConfig {
  rows: ShelfField[];
  series: ShelfField[];
  columns: ShelfField[];
  filters: FilterSpec[];
  sorts: SortSpec[];
  calculated_fields: CalculatedFieldDef[];
}

export const widgetNotFound = (id: number) => notFound(`Виджет не найден (id ${id})`);

export function configOf(row: WidgetRow): WidgetConfig {
  const c = (row.config ?? {}) as Partial<WidgetConfig>;
  return {
    rows: c.rows ?? [],
    series: c.series ?? [],
    columns: c.columns ?? [],
    filters: c.filters ?? [],
    sorts: c.sorts ?? [],
    calculated_fields: c.calculated_fields ?? [],
  };
}

export function widgetView(row: WidgetRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    dataset_id: row.datasetId,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    ...configOf(row),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type WidgetView = ReturnType<typeof widgetView>;

export interface WidgetAccess {
  row: WidgetRow;
  /** The caller's role in the widget's workspace; null for a system administrator who is not a member. */
  role: WorkspaceRole | null;
}

/** A widget in a workspace the caller cannot read does not exist for them: 404 «Виджет не найден (id …)». */
export async function readableWidget(db: DbOrTx, actor: Actor, id: number, opts: { lock?: boolean } = {}): Promise<WidgetAccess> {
  const query = db.select().from(widgets).where(eq(widgets.id, id));
  const [row] = opts.lock ? await query.for('update') : await query;
  if (!row) throw widgetNotFound(id);
  const role = await workspaceRoleOf(db, actor, row.workspaceId);
  if (!role && !actor.isSysadmin) throw widgetNotFound(id);
  return { row, role };
}

/**
 * The widget's owner: its author or Администратор of its workspace, with a role that still allows editing there
 * (an author demoted to Наблюдатель only reads). 404 when not readable, 403 otherwise.
 */
export async function ownedWidget(db: DbOrTx, actor: Actor, id: number): Promise<WidgetAccess> {
  const access = await readableWidget(db, actor, id, { lock: true });
  const { row, role } = access;
  if (!roleAllowsEdit(role) || (row.authorId !== actor.userId && !roleIsAdmin(role))) throw new AppError('forbidden');
  return access;
}
