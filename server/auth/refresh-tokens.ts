import { and, eq, gt, isNotNull, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { refreshTokens } from '../../db/schema/auth-tokens';
import { randomToken, sha256 } from './opaque-tokens';

const REFRESH_TOKEN_TTL_DAYS = 30;
const REFRESH_TOKEN_PREFIX = 'rt_';

/** Where a new refresh token belongs: a new family (a login) or the family of the token it replaces. */
export interface TokenLineage {
  familyId: string;
  parentId: number;
}

export async function issueRefreshToken(db: DbOrTx, userId: number, lineage?: TokenLineage): Promise<string> {
  const token = REFRESH_TOKEN_PREFIX + randomToken(32);
  await db.insert(refreshTokens).values({
    userId,
    tokenHash: sha256(token),
    ...(lineage && { familyId: lineage.familyId, parentId: lineage.parentId }),
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_DAYS * 86_400_000),
  });
  return token;
}

export type ConsumeResult =
  | { ok: true; userId: number; lineage: TokenLineage }
  /** `reused`: the token had already been exchanged; its family is now revoked. */
  | { ok: false; reused?: { userId: number; familyId: string; revoked: number } };

/**
 * Marks the token used and returns its user and lineage for the successor. The update is the check, so two
 * concurrent refreshes with one token cannot both succeed. A token that was already used means a second holder:
 * whichever of the two comes second, every token of the family (the successors included) is revoked, so the copy is
 * worth nothing and the rightful user logs in again. A token revoked otherwise (logout) or unknown is just refused.
 */
export async function consumeRefreshToken(db: DbOrTx, token: string): Promise<ConsumeResult> {
  const tokenHash = sha256(token);
  const [row] = await db
    .update(refreshTokens)
    .set({ usedAt: sql`now()`, revokedAt: sql`now()` })
    .where(
      and(
        eq(refreshTokens.tokenHash, tokenHash),
        isNull(refreshTokens.revokedAt),
        gt(refreshTokens.expiresAt, sql`now()`),
      ),
    )
    .returning({ id: refreshTokens.id, userId: refreshTokens.userId, familyId: refreshTokens.familyId });
  if (row) return { ok: true, userId: row.userId, lineage: { familyId: row.familyId, parentId: row.id } };

  const [spent] = await db
    .select({ userId: refreshTokens.userId, familyId: refreshTokens.familyId })
    .from(refreshTokens)
    .where(and(eq(refreshTokens.tokenHash, tokenHash), isNotNull(refreshTokens.usedAt)));
  if (!spent) return { ok: false };
  const revoked = await db
    .update(refreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(refreshTokens.familyId, spent.familyId), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id });
  return { ok: false, reused: { ...spent, revoked: revoked.length } };
}

export async function revokeUserRefreshTokens(db: DbOrTx, userId: number): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
}
