import { eq, inArray } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import { notFound } from '../kernel/errors';
import { groupRefsOfUsers } from '../groups/store';
import type { GroupRef } from '../groups/views';
import { personalWorkspaceIds } from '../workspaces/store';
import type { AccountType } from './accounts';

export type UserRow = typeof users.$inferSelect;

/** What any user may see of another account: enough to pick someone, nothing to contact or profile them. */
export interface UserSummary {
  id: number;
  username: string;
  full_name: string;
}

/** The whole account, for system administrators (and for the user themself). */
export interface UserRecord extends UserSummary {
  email: string | null;
  account_type: AccountType;
  active: boolean;
  must_change_password: boolean;
  groups: GroupRef[];
  personal_workspace_id: number | null;
  created_at: string;
  updated_at: string;
}

const userNotFound = (id: number) => notFound(`Пользователь не найден (id ${id})`);

export const userSummary = (u: UserRow): UserSummary => ({ id: u.id, username: u.username, full_name: u.fullName });

/** Full records for a page of users: their groups and personal workspaces in two queries, not two per user. */
export async function userRecords(db: DbOrTx, rows: UserRow[]): Promise<UserRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const groupsOf = await groupRefsOfUsers(db, ids);
  const personalOf = await personalWorkspaceIds(db, ids);
  return rows.map((u) => ({
    ...userSummary(u),
    email: u.email,
    account_type: u.accountType as AccountType,
    active: u.active,
    must_change_password: u.mustChangePassword,
    groups: groupsOf.get(u.id) ?? [],
    personal_workspace_id: personalOf.get(u.id) ?? null,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  }));
}

export async function userRecord(db: DbOrTx, row: UserRow): Promise<UserRecord> {
  const [record] = await userRecords(db, [row]);
  return record;
}

/** The account row, locked for the rest of the transaction when asked (so two admins' changes do not interleave). */
export async function findUserOr404(db: DbOrTx, id: number, opts: { forUpdate?: boolean } = {}): Promise<UserRow> {
  const query = db.select().from(users).where(eq(users.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  if (!row) throw userNotFound(id);
  return row;
}

/**
 * What other areas may join of an account (the author or member column of their lists): id, username, full name and
 * whether it is active, as a subquery PostgreSQL inlines, so a list stays one query and never sees passwords or
 * e-mail addresses.
 */
export const userRef = (alias = 'user_ref') =>
  new QueryBuilder()
    .select({ id: users.id, username: users.username, fullName: users.fullName, active: users.active })
    .from(users)
    .as(alias);

/** An account as another object names it (its author, owner or caller). */
export interface UserName {
  id: number;
  username: string;
}

/** The usernames of the given accounts in one query; an id that is no account (deleted) is absent. */
export async function userNamesById(db: DbOrTx, ids: Iterable<number | null>): Promise<Map<number, UserName>> {
  const wanted = [...new Set([...ids].filter((i): i is number => i !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.select({ id: users.id, username: users.username }).from(users).where(inArray(users.id, wanted));
  return new Map(rows.map((r) => [r.id, r]));
}
