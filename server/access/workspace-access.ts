import { Column, and, eq, getTableName, inArray, is, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { workspaceMembers, workspaces } from '../../db/schema/workspaces';
import type { Actor } from '../auth/actor';
import { AppError, badRequest, notFound } from '../kernel/errors';
import { personalWorkspaceId } from '../workspaces/store';
import { WORKSPACE_ROLES, roleAllowsEdit, roleIsAdmin, roleRank, strongestRole, type WorkspaceRole } from './roles';

/*
 * Workspace access for every area (data sources, datasets, widgets, dashboards, pipelines ...).
 *
 * - A caller's role in a workspace is the strongest of their direct membership and of the memberships of their
 *   groups. The groups are `actor.groupIds`: for a session token the snapshot taken at login, for an API token the
 *   owner's current groups, so a group change reaches a session only at the next login.
 * - A system administrator has no implicit role: they can read every workspace (support and audit) but editing its
 *   objects or administering it needs a real role there like anyone else.
 * - A workspace the caller may not read does not exist for them: 404, never 403, so ids do not leak.
 */

export type WorkspaceRow = typeof workspaces.$inferSelect;

export interface WorkspaceAccess {
  workspace: WorkspaceRow;
  /** The caller's role; null only for a system administrator who is not a member. */
  role: WorkspaceRole | null;
}

export const workspaceNotFound = (id: number) => notFound(`Рабочее пространство не найдено (id ${id})`);

/** Rows of workspace_members that belong to the caller: their own, or a group of theirs. */
function actorMemberRows(actor: Actor): SQL {
  const direct = eq(workspaceMembers.userId, actor.userId);
  return actor.groupIds.length > 0 ? or(direct, inArray(workspaceMembers.groupId, actor.groupIds))! : direct;
}

/*
 * The two SQL fragments below are correlated subqueries that other queries embed. drizzle leaves column names
 * unqualified in some positions (select lists of one-table queries), where "id" inside the subquery would silently
 * mean workspace_members.id. So they use an alias of their own and qualify every name, the outer one included.
 */
const ACCESS_ALIAS = 'wm_access';
const accessCol = (name: string) => sql`${sql.identifier(ACCESS_ALIAS)}.${sql.identifier(name)}`;

/** A column as `"table"."column"`; SQL is passed through (use SQL for a table that the outer query aliases). */
const qualified = (c: AnyColumn | SQL): SQL =>
  is(c, Column) ? sql`${sql.identifier(getTableName(c.table))}.${sql.identifier(c.name)}` : (c as SQL);

/**
 * The caller of a prepared statement: its user and groups are the statement's parameters `userId` and `groupIds`
 * (bind them with preparedCallerParams), so the statement's text does not depend on the caller and PostgreSQL plans
 * it once per connection.
 */
export const PREPARED_CALLER = Symbol('prepared caller');
export type CallerRef = Actor | typeof PREPARED_CALLER;
export const preparedCallerParams = (actor: Actor) => ({ userId: actor.userId, groupIds: actor.groupIds });

function actorAccessRows(actor: CallerRef): SQL {
  if (actor === PREPARED_CALLER) {
    return sql`(${accessCol('user_id')} = ${sql.placeholder('userId')}
        or ${accessCol('group_id')} = any(cast(${sql.placeholder('groupIds')} as integer[])))`;
  }
  const direct = sql`${accessCol('user_id')} = ${actor.userId}`;
  if (actor.groupIds.length === 0) return direct;
  return sql`(${direct} or ${accessCol('group_id')} in (${sql.join(
    actor.groupIds.map((g) => sql`${g}`),
    sql`, `,
  )}))`;
}

/** SQL: the rank (1..3, see roles.ts) of the caller's strongest role in the workspace `workspaceId`, or null. */
export function actorRoleRankSql(actor: CallerRef, workspaceId: AnyColumn | SQL): SQL<number | null> {
  const rank = sql.join(
    WORKSPACE_ROLES.map((r) => sql`when ${r} then ${sql.raw(String(roleRank(r)))}`),
    sql` `,
  );
  return sql<number | null>`(select max(case ${accessCol('role')} ${rank} end)
    from ${workspaceMembers} as ${sql.identifier(ACCESS_ALIAS)}
    where ${accessCol('workspace_id')} = ${qualified(workspaceId)} and ${actorAccessRows(actor)})`;
}

/** The caller's strongest role in the workspace, or null when they are not a member (directly or by group). */
export async function workspaceRoleOf(db: DbOrTx, actor: Actor, workspaceId: number): Promise<WorkspaceRole | null> {
  const rows = await db
    .select({ role: workspaceMembers.role })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), actorMemberRows(actor)));
  return strongestRole(rows.map((r) => r.role));
}

/**
 * Condition "column holds a workspace the caller can read", for lists of any area:
 * `.where(and(inVisibleWorkspaces(actor, datasets.workspaceId), ...))`. Always true for a system administrator.
 */
export function inVisibleWorkspaces(actor: Actor, column: AnyColumn | SQL): SQL {
  if (actor.isSysadmin) return sql`true`;
  return sql`${qualified(column)} in (select ${accessCol('workspace_id')} from ${workspaceMembers} as ${sql.identifier(ACCESS_ALIAS)}
    where ${actorAccessRows(actor)})`;
}

/** The workspace and the caller's role in it; 404 when it does not exist or the caller may not read it. */
export async function assertWorkspaceReadable(db: DbOrTx, actor: Actor, workspaceId: number): Promise<WorkspaceAccess> {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!workspace) throw workspaceNotFound(workspaceId);
  const role = await workspaceRoleOf(db, actor, workspaceId);
  if (!role && !actor.isSysadmin) throw workspaceNotFound(workspaceId);
  return { workspace, role };
}

/** As readable, and the role lets the caller create and change objects (Редактор or Администратор): else 403. */
export async function assertWorkspaceEditable(db: DbOrTx, actor: Actor, workspaceId: number): Promise<WorkspaceAccess> {
  const access = await assertWorkspaceReadable(db, actor, workspaceId);
  if (!roleAllowsEdit(access.role)) throw new AppError('forbidden');
  return access;
}

/** As readable, and the caller is Администратор of the workspace: else 403. */
export async function assertWorkspaceAdmin(db: DbOrTx, actor: Actor, workspaceId: number): Promise<WorkspaceAccess> {
  const access = await assertWorkspaceReadable(db, actor, workspaceId);
  if (!roleIsAdmin(access.role)) throw new AppError('forbidden');
  return access;
}

/** The caller's personal workspace: where objects go when a create call names no workspace. */
export async function defaultWorkspaceFor(db: DbOrTx, actor: Actor): Promise<number> {
  const id = await personalWorkspaceId(db, actor.userId);
  // Every account gets one at creation; a missing one is a damaged account, reported rather than guessed around.
  if (id === undefined) throw badRequest('У учётной записи нет личного пространства: укажите workspace_id');
  return id;
}
