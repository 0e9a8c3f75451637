import { and, count, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import type { Actor } from '../auth/actor';
import { groupsOfUserPage, isGroupMemberSql } from '../groups/views';
import { containsPattern, orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { findUserOr404, userRecord, userRecords, userSummary, type UserRecord, type UserSummary } from './views';

export const USER_SORT_FIELDS = ['id', 'username', 'full_name', 'created_at'] as const;
export const USER_GROUP_SORT_FIELDS = ['id', 'name', 'added_at'] as const;

export interface UserListFilter {
  query?: string;
  groupId?: number;
  active?: boolean;
}

/** Everyone may list accounts (to pick a member or a recipient); only system administrators get whole records. */
export async function listUsers(db: DbOrTx, actor: Actor, input: PageRequest & UserListFilter) {
  const conditions: SQL[] = [];
  if (input.query) {
    const p = containsPattern(input.query);
    // Others may find people by name, but must not be able to probe e-mail addresses through the search.
    const searchable = [ilike(users.username, p), ilike(users.fullName, p)];
    if (actor.isSysadmin) searchable.push(ilike(users.email, p));
    conditions.push(or(...searchable)!);
  }
  if (input.groupId !== undefined) conditions.push(isGroupMemberSql(input.groupId, users.id));
  if (input.active !== undefined) conditions.push(eq(users.active, input.active));
  const where = conditions.length ? and(...conditions) : undefined;

  const [{ total }] = await db.select({ total: count() }).from(users).where(where);
  const rows = await db
    .select()
    .from(users)
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          id: users.id,
          username: sql`lower(${users.username})`,
          full_name: users.fullName,
          created_at: users.createdAt,
        },
        [sql`lower(${users.username})`],
        users.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  const content: (UserRecord | UserSummary)[] = actor.isSysadmin ? await userRecords(db, rows) : rows.map(userSummary);
  return pageOf(content, input, total);
}

export async function getUser(db: DbOrTx, actor: Actor, id: number): Promise<UserRecord | UserSummary> {
  const row = await findUserOr404(db, id);
  return actor.isSysadmin || actor.userId === id ? userRecord(db, row) : userSummary(row);
}

/**
 * The caller's profile. `groups` are the current memberships; the two rights flags are those of the presented token
 * (for a session token, as at login), so a client can tell the user that a new login is needed.
 */
export async function currentUser(db: DbOrTx, actor: Actor) {
  const record = await userRecord(db, await findUserOr404(db, actor.userId));
  return {
    ...record,
    is_system_administrator: actor.isSysadmin,
    is_workspace_manager: actor.isWorkspaceManager,
    token_kind: actor.tokenKind,
  };
}

export async function listUserGroups(db: DbOrTx, userId: number, input: PageRequest) {
  await findUserOr404(db, userId);
  return groupsOfUserPage(db, userId, input);
}
