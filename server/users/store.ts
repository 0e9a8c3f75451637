import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import { notFound } from '../kernel/errors';

/*
 * The users' writes: transaction first, no actor, no checks (user-admin.ts, accounts.ts and password-changes.ts
 * decide who may and what follows a change: sessions cut off, tokens revoked, caches dropped), never a transaction
 * of their own.
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
