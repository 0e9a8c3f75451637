import { asc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { userAttributes } from '../../db/schema/users';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { findUserOr404 } from './views';

/** key -> values, read by row-level security rules (e.g. region -> [North, West]). */
export type UserAttributes = Record<string, string[]>;

export async function getUserAttributes(db: DbOrTx, userId: number): Promise<{ attributes: UserAttributes }> {
  await findUserOr404(db, userId);
  const rows = await db
    .select({ key: userAttributes.key, values: userAttributes.values })
    .from(userAttributes)
    .where(eq(userAttributes.userId, userId))
    .orderBy(asc(userAttributes.key));
  return { attributes: Object.fromEntries(rows.map((r) => [r.key, r.values])) };
}

/**
 * Replaces the whole map at once: keys left out are removed. Values keep their order, without repeats. An empty list
 * is kept as such (it is not the same as a missing key for an RLS rule).
 */
export async function setUserAttributes(deps: AppDeps, userId: number, attributes: UserAttributes) {
  await deps.db.transaction(async (tx) => {
    await findUserOr404(tx, userId, { forUpdate: true });
    await tx.delete(userAttributes).where(eq(userAttributes.userId, userId));
    const rows = Object.entries(attributes).map(([key, values]) => ({ userId, key, values: [...new Set(values)] }));
    if (rows.length) await tx.insert(userAttributes).values(rows);
  });
  readCachesChanged(deps); // row-level security reads the attributes: a change takes effect at once
  return getUserAttributes(deps.db, userId);
}

/** Every attribute key some user has, with how many users have it: the vocabulary of the RLS rule editor. */
export async function listAttributeKeys(db: DbOrTx) {
  const rows = await db
    .select({ key: userAttributes.key, users: sql<number>`count(*)::int` })
    .from(userAttributes)
    .groupBy(userAttributes.key)
    .orderBy(asc(userAttributes.key));
  return { keys: rows.map((r) => ({ key: r.key, user_count: r.users })) };
}
