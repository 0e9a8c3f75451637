import { count, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import { notFound } from '../kernel/errors';

/*
 * The users' writes and the reads other areas need of accounts: transaction first, no actor, no checks
 * (user-admin.ts, accounts.ts and password-changes.ts decide who may and what follows a change: sessions cut off,
 * tokens revoked, caches dropped), never a transaction of their own.
 */

export type UserInsert = typeof users.$inferInsert;
type UserRow = typeof users.$inferSelect;
export type UserPatch = Partial<
  Pick<UserInsert, 'fullName' | 'email' | 'accountType' | 'active' | 'passwordHash' | 'mustChangePassword'>
>;

export async function insertUser(tx: DbOrTx, values: UserInsert): Promise<UserRow> {
  const [row] = await tx.insert(users).values(values).returning();
  return row;
}

/** Every save moves updated_at. 404 if missing. */
export async function updateUser(tx: DbOrTx, id: number, patch: UserPatch): Promise<UserRow> {
  const [row] = await tx
    .update(users)
    .set({ ...patch, updatedAt: sql`now()` })
    .where(eq(users.id, id))
    .returning();
  // The message of views.ts, which this store cannot import: views.ts takes a type from accounts.ts, which inserts here.
  if (!row) throw notFound(`Пользователь не найден (id ${id})`);
  return row;
}

/** What authentication checks of an account on every request (cached per user by the caller). */
export interface AccountStatus {
  username: string;
  accountType: string;
  active: boolean;
}

/** The account's status; undefined when it no longer exists. */
export async function accountStatus(db: DbOrTx, id: number): Promise<AccountStatus | undefined> {
  const [row] = await db
    .select({ username: users.username, accountType: users.accountType, active: users.active })
    .from(users)
    .where(eq(users.id, id));
  return row;
}

/** Of `ids`, those that are accounts (one query). */
export async function existingUserIds(db: DbOrTx, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(inArray(users.id, [...new Set(ids)]));
  return new Set(rows.map((r) => r.id));
}

/** The e-mail addresses of the accounts that have one. */
export async function emailsOf(db: DbOrTx, ids: readonly number[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ email: users.email })
    .from(users)
    .where(inArray(users.id, [...new Set(ids)]));
  return rows.flatMap((r) => (r.email ? [r.email] : []));
}

export async function countUsers(db: DbOrTx): Promise<number> {
  const [{ n }] = await db.select({ n: count() }).from(users);
  return n;
}
