import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groups } from '../../db/schema/groups';
import { findGroupOr404, type GroupRow } from './views';

/*
 * The groups' writes: transaction first, no actor, no checks (groups.ts keeps names unique and system groups
 * named), never a transaction of their own.
 */

export type GroupInsert = typeof groups.$inferInsert;

export async function insertGroup(tx: DbOrTx, values: GroupInsert): Promise<GroupRow> {
  const [row] = await tx.insert(groups).values(values).returning();
  return row;
}

/** Name and description; every save moves updated_at. 404 if missing. */
export async function updateGroup(
  tx: DbOrTx,
  id: number,
  patch: Partial<Pick<GroupInsert, 'name' | 'description'>>,
): Promise<GroupRow> {
  const [row] = await tx
    .update(groups)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(groups.id, id))
    .returning();
  return row ?? findGroupOr404(tx, id); // no row: the group does not exist, and that answers its 404
}
