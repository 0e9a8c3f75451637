import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { workspaceMembers, workspaces } from '../../db/schema/workspaces';
import { notFound } from '../kernel/errors';
import { ADMIN_ROLE } from '../access/roles';

/*
 * The workspaces' writes and the reads other areas need: transaction first, no actor, no access checks
 * (workspaces.ts and users/accounts.ts decide who may), never a transaction of their own.
 */

export type WorkspaceInsert = typeof workspaces.$inferInsert;
type WorkspaceRow = typeof workspaces.$inferSelect;

/** A workspace and its first Администратор (its creator, or the owner of a personal one): the two exist together. */
export async function insertWorkspace(tx: DbOrTx, values: WorkspaceInsert, adminUserId: number): Promise<WorkspaceRow> {
  const [row] = await tx.insert(workspaces).values(values).returning();
  await tx.insert(workspaceMembers).values({ workspaceId: row.id, userId: adminUserId, role: ADMIN_ROLE });
  return row;
}

/** Name and description; every save moves updated_at. 404 if missing. */
export async function updateWorkspace(
  tx: DbOrTx,
  id: number,
  patch: Partial<Pick<WorkspaceInsert, 'name' | 'description'>>,
): Promise<WorkspaceRow> {
  const [row] = await tx
    .update(workspaces)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(workspaces.id, id))
    .returning();
  // The message of access/workspace-access.ts, which imports this store (personalWorkspaceId), so not imported back.
  if (!row) throw notFound(`Рабочее пространство не найдено (id ${id})`);
  return row;
}

/** The user's personal workspace (none while the account is being created). */
export async function personalWorkspaceId(db: DbOrTx, userId: number): Promise<number | undefined> {
  return (await personalWorkspaceIds(db, [userId])).get(userId);
}

/** user id -> personal workspace id, for a page of users in one query. */
export async function personalWorkspaceIds(db: DbOrTx, userIds: number[]): Promise<Map<number, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .select({ ownerUserId: workspaces.ownerUserId, id: workspaces.id })
    .from(workspaces)
    .where(and(inArray(workspaces.ownerUserId, userIds), eq(workspaces.type, 'personal')));
  return new Map(rows.map((r) => [r.ownerUserId!, r.id]));
}

/** Shared workspaces where the user is Администратор, directly or through one of `groupIds`; by name. */
export async function sharedWorkspacesAdministeredBy(
  db: DbOrTx,
  userId: number,
  groupIds: number[],
): Promise<{ id: number; name: string; description: string }[]> {
  const member = groupIds.length
    ? or(eq(workspaceMembers.userId, userId), inArray(workspaceMembers.groupId, groupIds))
    : eq(workspaceMembers.userId, userId);
  return db
    .selectDistinct({ id: workspaces.id, name: workspaces.name, description: workspaces.description })
    .from(workspaces)
    .innerJoin(workspaceMembers, eq(workspaceMembers.workspaceId, workspaces.id))
    .where(and(eq(workspaces.type, 'shared'), eq(workspaceMembers.role, ADMIN_ROLE), member))
    .orderBy(asc(workspaces.name), asc(workspaces.id));
}
