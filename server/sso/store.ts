import { and, asc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { ssoGroupMappings, ssoLoginCodes, ssoLoginStates, ssoProviders, ssoSamlAssertions } from '../../db/schema/sso';
import { addUserToGroups, existingGroupIds, removeUserFromGroups } from '../groups/store';
import { accountStatus } from '../users/store';

/* Rows of the SSO tables (db/schema/sso.ts), transaction first and actor free. */

export type SsoProviderRow = typeof ssoProviders.$inferSelect;
type NewProviderRow = typeof ssoProviders.$inferInsert;

export async function findProvider(db: DbOrTx, id: number, opts: { forUpdate?: boolean } = {}) {
  const query = db.select().from(ssoProviders).where(eq(ssoProviders.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  return row as SsoProviderRow | undefined;
}

export const listProviderRows = (db: DbOrTx, opts: { enabledOnly?: boolean } = {}) =>
  db
    .select()
    .from(ssoProviders)
    .where(opts.enabledOnly ? eq(ssoProviders.enabled, true) : undefined)
    .orderBy(asc(sql`lower(${ssoProviders.name})`), asc(ssoProviders.id));

export async function insertProvider(db: DbOrTx, values: NewProviderRow): Promise<SsoProviderRow> {
  const [row] = await db.insert(ssoProviders).values(values).returning();
  return row;
}

export async function updateProviderRow(db: DbOrTx, id: number, values: Partial<NewProviderRow>) {
  const [row] = await db
    .update(ssoProviders)
    .set({ ...values, updatedAt: sql`now()` })
    .where(eq(ssoProviders.id, id))
    .returning();
  return row as SsoProviderRow | undefined;
}

export async function deleteProviderRow(db: DbOrTx, id: number): Promise<boolean> {
  const rows = await db.delete(ssoProviders).where(eq(ssoProviders.id, id)).returning({ id: ssoProviders.id });
  return rows.length > 0;
}

/** The ids of `ids` that are no group. */
export async function missingGroupIds(db: DbOrTx, ids: readonly number[]): Promise<number[]> {
  const known = await existingGroupIds(db, ids);
  return ids.filter((id) => !known.has(id));
}

export const groupMappingRows = (db: DbOrTx, providerId: number) =>
  db
    .select({ idpGroup: ssoGroupMappings.idpGroup, groupId: ssoGroupMappings.groupId })
    .from(ssoGroupMappings)
    .where(eq(ssoGroupMappings.providerId, providerId))
    .orderBy(asc(ssoGroupMappings.idpGroup), asc(ssoGroupMappings.groupId));

export async function replaceGroupMappingRows(
  db: DbOrTx,
  providerId: number,
  mappings: readonly { idpGroup: string; groupId: number }[],
): Promise<void> {
  await db.delete(ssoGroupMappings).where(eq(ssoGroupMappings.providerId, providerId));
  if (mappings.length) {
    await db
      .insert(ssoGroupMappings)
      .values(mappings.map((m) => ({ providerId, ...m })))
      .onConflictDoNothing();
  }
}

export async function insertLoginState(db: DbOrTx, values: typeof ssoLoginStates.$inferInsert): Promise<void> {
  // Keep the table small: abandoned logins no longer matter once expired.
  if (Math.random() < 0.05) await db.delete(ssoLoginStates).where(lt(ssoLoginStates.expiresAt, sql`now()`));
  await db.insert(ssoLoginStates).values(values);
}

/**
 * Spends a login state of this provider: deleted whether or not it is still valid, returned only when valid. The
 * provider is part of the match, so that a state sent to another provider's callback (a foreign RelayState or a
 * forged state) cannot burn the login it belongs to.
 */
export async function takeLoginState(db: DbOrTx, providerId: number, stateHash: string) {
  const [row] = await db
    .delete(ssoLoginStates)
    .where(and(eq(ssoLoginStates.stateHash, stateHash), eq(ssoLoginStates.providerId, providerId)))
    .returning();
  if (!row || row.expiresAt.getTime() <= Date.now()) return undefined;
  return row;
}

export async function insertLoginCode(db: DbOrTx, values: typeof ssoLoginCodes.$inferInsert): Promise<void> {
  if (Math.random() < 0.05) await db.delete(ssoLoginCodes).where(lt(ssoLoginCodes.expiresAt, sql`now()`));
  await db.insert(ssoLoginCodes).values(values);
}

/** Marks a valid, unused code used and returns it; a second caller (a replay, even a concurrent one) gets nothing. */
export async function spendLoginCode(db: DbOrTx, codeHash: string) {
  const [row] = await db
    .update(ssoLoginCodes)
    .set({ usedAt: sql`now()` })
    .where(
      and(eq(ssoLoginCodes.codeHash, codeHash), isNull(ssoLoginCodes.usedAt), gt(ssoLoginCodes.expiresAt, sql`now()`)),
    )
    .returning();
  return row;
}

/** Records an accepted SAML assertion id; false when the provider has already accepted it (a replay). */
export async function rememberAssertion(
  db: DbOrTx,
  providerId: number,
  assertionId: string,
  expiresAt: Date,
): Promise<boolean> {
  if (Math.random() < 0.05) await db.delete(ssoSamlAssertions).where(lt(ssoSamlAssertions.expiresAt, sql`now()`));
  const rows = await db
    .insert(ssoSamlAssertions)
    .values({ providerId, assertionId, expiresAt })
    .onConflictDoNothing()
    .returning({ id: ssoSamlAssertions.assertionId });
  return rows.length > 0;
}

/**
 * Group mapping at an SSO login: of the groups the provider's mappings name, the user keeps exactly those their IdP
 * groups map to; memberships of unmapped groups are left alone. Answers whether anything changed.
 */
export async function syncMappedGroups(db: DbOrTx, providerId: number, userId: number, idpGroups: readonly string[]) {
  const mappings = await groupMappingRows(db, providerId);
  if (mappings.length === 0) return false;
  const held = new Set(idpGroups);
  const mapped = [...new Set(mappings.map((m) => m.groupId))];
  const wanted = [...new Set(mappings.filter((m) => held.has(m.idpGroup)).map((m) => m.groupId))];
  const unwanted = mapped.filter((id) => !wanted.includes(id));
  const removed = await removeUserFromGroups(db, userId, unwanted);
  const added = await addUserToGroups(db, userId, wanted);
  return removed.length > 0 || added.length > 0;
}

/** Whether the account exists and is active (null: it no longer exists). */
export async function userIsActive(db: DbOrTx, userId: number): Promise<boolean | null> {
  const status = await accountStatus(db, userId);
  return status ? status.active : null;
}

/**
 * Queues the transactions that match or create the account of one username (case-insensitive, as usernames are
 * unique) until the holder commits or rolls back.
 */
export async function lockAccountName(db: DbOrTx, username: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext('sso-account:' || lower(${username})))`);
}
