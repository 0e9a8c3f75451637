import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groupMembers, groups } from '../../db/schema/groups';
import { findGroupOr404, type GroupRef, type GroupRow } from './views';

/*
 * The groups' writes and the reads other areas need of groups and memberships: transaction first, no actor, no
 * checks (groups.ts keeps names unique and system groups named), never a transaction of their own.
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

/** Of `ids`, those that are groups (one query). */
export async function existingGroupIds(db: DbOrTx, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: groups.id })
    .from(groups)
    .where(inArray(groups.id, [...new Set(ids)]));
  return new Set(rows.map((r) => r.id));
}

/** The group of each system key present (the system groups are created at first start). */
export async function groupIdsBySystemKey(db: DbOrTx, keys: string[]): Promise<Map<string, number>> {
  const rows = await db
    .select({ id: groups.id, key: groups.systemKey })
    .from(groups)
    .where(inArray(groups.systemKey, keys));
  return new Map(rows.map((r) => [r.key!, r.id]));
}

/** A system group, unless one with its key exists already (several nodes may start at once). */
export async function ensureSystemGroup(
  tx: DbOrTx,
  systemKey: string,
  values: { name: string; description: string },
): Promise<void> {
  await tx
    .insert(groups)
    .values({ ...values, systemKey })
    .onConflictDoNothing();
}

/** The groups the user is a member of, by id. */
export async function userGroupIds(db: DbOrTx, userId: number): Promise<number[]> {
  const rows = await db.select({ id: groupMembers.groupId }).from(groupMembers).where(eq(groupMembers.userId, userId));
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** The groups of each of the users, by name (one query for a whole page of users). */
export async function groupRefsOfUsers(db: DbOrTx, userIds: number[]): Promise<Map<number, GroupRef[]>> {
  const out = new Map<number, GroupRef[]>();
  if (userIds.length === 0) return out;
  const rows = await db
    .select({ userId: groupMembers.userId, id: groups.id, name: groups.name, systemKey: groups.systemKey })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(inArray(groupMembers.userId, userIds))
    .orderBy(asc(groups.name), asc(groups.id));
  for (const r of rows) {
    const list = out.get(r.userId) ?? [];
    list.push({ id: r.id, name: r.name, system: r.systemKey !== null });
    out.set(r.userId, list);
  }
  return out;
}

/** The accounts in any of the groups, each once. */
export async function memberUserIds(db: DbOrTx, groupIds: number[]): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ userId: groupMembers.userId })
    .from(groupMembers)
    .where(inArray(groupMembers.groupId, groupIds));
  return rows.map((r) => r.userId);
}

/** Makes the user a member of the groups; answers the groups they were not in before. */
export async function addUserToGroups(tx: DbOrTx, userId: number, groupIds: number[]): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await tx
    .insert(groupMembers)
    .values([...new Set(groupIds)].map((groupId) => ({ groupId, userId })))
    .onConflictDoNothing()
    .returning({ id: groupMembers.groupId });
  return rows.map((r) => r.id);
}

/** Ends the user's membership of the groups; answers the groups they were in. */
export async function removeUserFromGroups(tx: DbOrTx, userId: number, groupIds: number[]): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await tx
    .delete(groupMembers)
    .where(and(eq(groupMembers.userId, userId), inArray(groupMembers.groupId, groupIds)))
    .returning({ id: groupMembers.groupId });
  return rows.map((r) => r.id);
}
