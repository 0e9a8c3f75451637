import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groupMembers } from '../../db/schema/groups';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { badRequest, invalid, notFound } from '../kernel/errors';
import { orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { existingUserIds } from '../users/store';
import { userRef } from '../users/views';
import { findGroupOr404 } from './views';

export const GROUP_MEMBER_SORT_FIELDS = ['id', 'username', 'full_name', 'added_at'] as const;

export async function listGroupMembers(db: DbOrTx, groupId: number, input: PageRequest) {
  await findGroupOr404(db, groupId);
  const where = eq(groupMembers.groupId, groupId);
  const [{ total }] = await db.select({ total: count() }).from(groupMembers).where(where);
  const users = userRef();
  const rows = await db
    .select({
      id: users.id,
      username: users.username,
      fullName: users.fullName,
      active: users.active,
      addedAt: groupMembers.createdAt,
    })
    .from(groupMembers)
    .innerJoin(users, eq(users.id, groupMembers.userId))
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          id: users.id,
          username: sql`lower(${users.username})`,
          full_name: users.fullName,
          added_at: groupMembers.createdAt,
        },
        [asc(sql`lower(${users.username})`)],
        users.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  const content = rows.map((r) => ({
    id: r.id,
    username: r.username,
    full_name: r.fullName,
    active: r.active,
    added_at: r.addedAt.toISOString(),
  }));
  return pageOf(content, input, total);
}

/** 422 naming each id of `ids` that is not an account, at its position in the body (`userIds[1]`). */
async function assertUsersExist(db: DbOrTx, ids: readonly number[], field: string): Promise<void> {
  const known = await existingUserIds(db, ids);
  const errors: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (!known.has(id)) errors[`${field}[${i}]`] = `Пользователь не найден (id ${id})`;
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

/**
 * Adding someone already in the group is not an error (the call states the wanted outcome). Rights granted by the
 * group reach a session at the user's next login; API tokens get them at once.
 */
export async function addGroupMembers(deps: AppDeps, groupId: number, userIds: number[]) {
  try {
    return await deps.db
      .transaction(async (tx) => {
        await findGroupOr404(tx, groupId, { forUpdate: true });
        await assertUsersExist(tx, userIds, 'userIds');
        const unique = [...new Set(userIds)];
        const inserted = await tx
          .insert(groupMembers)
          .values(unique.map((userId) => ({ groupId, userId })))
          .onConflictDoNothing()
          .returning({ userId: groupMembers.userId });
        const added = new Set(inserted.map((r) => r.userId));
        return {
          group_id: groupId,
          added_user_ids: unique.filter((id) => added.has(id)),
          already_member_user_ids: unique.filter((id) => !added.has(id)),
        };
      })
      .finally(() => readCachesChanged(deps)); // a group's members read its workspaces: cached read decisions go
  } catch (e) {
    // An account deleted between our check and the insert: reported like any unknown id.
    if (isForeignKeyViolation(e)) throw invalid({ userIds: 'Пользователь не найден' });
    throw e;
  }
}

export async function removeGroupMember(deps: AppDeps, groupId: number, userId: number) {
  return deps.db
    .transaction(async (tx) => {
      // The group row lock serialises removals, so two admins cannot remove the last two platform administrators at once.
      await findGroupOr404(tx, groupId, { forUpdate: true });
      const membership = and(eq(groupMembers.groupId, groupId), eq(groupMembers.userId, userId));
      const [member] = await tx.select({ userId: groupMembers.userId }).from(groupMembers).where(membership);
      if (!member) throw notFound(`Пользователь не состоит в группе (id ${userId})`);
      if (groupId === deps.systemGroups.platformAdmins) {
        const [{ n }] = await tx.select({ n: count() }).from(groupMembers).where(eq(groupMembers.groupId, groupId));
        if (n <= 1) throw badRequest('Нельзя исключить последнего администратора платформы');
      }
      await tx.delete(groupMembers).where(membership);
      return { group_id: groupId, user_id: userId, removed: true as const };
    })
    .finally(() => readCachesChanged(deps));
}
