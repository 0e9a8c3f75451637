import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { refreshTokens } from '../../db/schema';
import { randomToken, sha256 } from './opaque-tokens';

export const REFRESH_TOKEN_TTL_DAYS = 30;
export const REFRESH_TOKEN_PREFIX = 'rt_';

export async function issueRefreshToken(db: DbOrTx, userId: number): Promise<string> {
  const token = REFRESH_TOKEN_PREFIX + randomToken(32);
  await db.insert(refreshTokens).values({
    userId,
    tokenHash: sha256(token),
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_DAYS * 86_400_000),
  });
  return token;
}

/**
 * Marks the token used and returns its user, or null when it is unknown, revoked or expired. The update is the
 * check, so two concurrent refreshes with one token cannot both succeed.
 */
export async function consumeRefreshToken(db: DbOrTx, token: string): Promise<number | null> {
  const rows = await db
    .update(refreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(
      and(eq(refreshTokens.tokenHash, sha256(token)), isNull(refreshTokens.revokedAt), gt(refreshTokens.expiresAt, sql`now()`)),
    )
    .returning({ userId: refreshTokens.userId });
  return rows[0]?.userId ?? null;
}

export async function revokeUserRefreshTokens(db: DbOrTx, userId: number): Promise<void> {
  await db
    .update(refreshTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
}
