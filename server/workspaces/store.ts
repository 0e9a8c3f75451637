import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { workspaceMembers, workspaces } from '../../db/schema/workspaces';
import { notFound } from '../kernel/errors';
import { ADMIN_ROLE } from '../access/roles';

/*
 * The workspaces' writes: transaction first, no actor, no access checks (workspaces.ts and users/accounts.ts decide
 * who may), never a transaction of their own.
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
  // The message of access/workspace-access.ts (which imports users/, so a store below it cannot import it back).
  if (!row) throw notFound(`Рабочее пространство не найдено (id ${id})`);
  return row;
}
