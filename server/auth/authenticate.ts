import { eq } from 'drizzle-orm';
import { apiTokens } from '../../db/schema/auth-tokens';
import { users } from '../../db/schema/users';
import type { AppDeps, UserStatus } from '../app/deps';
import { AppError } from '../kernel/errors';
import { userGroupIds } from '../users/accounts';
import { actorOf, type Actor } from './actor';
import { API_TOKEN_PREFIX, assertApiTokensUsable, touchApiToken } from './api-tokens';
import { sha256 } from './opaque-tokens';
import { verifySessionToken } from './session-tokens';

async function userStatus(deps: AppDeps, userId: number): Promise<UserStatus | null> {
  return deps.caches.userStatus.getOrLoad(userId, async () => {
    const [u] = await deps.db
      .select({ username: users.username, accountType: users.accountType, active: users.active })
      .from(users)
      .where(eq(users.id, userId));
    return u ?? null;
  });
}

/** Resolves the Authorization header to the caller, or throws 401 (403 for a token kind switched off). */
export async function authenticate(deps: AppDeps, authorization: string | undefined): Promise<Actor> {
  if (!authorization) throw new AppError('unauthorized', 'Требуется заголовок Authorization: Bearer <токен>');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new AppError('unauthorized', 'Неверный формат заголовка Authorization');
  const token = match[1];

  if (token.startsWith(API_TOKEN_PREFIX)) {
    const hash = sha256(token);
    const identity = await deps.caches.apiTokens.getOrLoad(hash, async () => {
      const [row] = await deps.db
        .select({ tokenId: apiTokens.id, userId: apiTokens.userId, status: apiTokens.status })
        .from(apiTokens)
        .where(eq(apiTokens.tokenHash, hash));
      return row ?? null;
    });
    if (!identity || identity.status === 'revoked') throw new AppError('unauthorized', 'Недействительный токен');
    if (identity.status === 'suspended') throw new AppError('unauthorized', 'Токен приостановлен');
    const status = await userStatus(deps, identity.userId);
    if (!status?.active) throw new AppError('unauthorized', 'Учётная запись отключена');
    // An API token always acts with its owner's current groups.
    const groupIds = await userGroupIds(deps.db, identity.userId);
    await assertApiTokensUsable(deps, { accountType: status.accountType, groupIds });
    touchApiToken(deps, identity.tokenId);
    return { ...actorOf(deps, identity.userId, status, groupIds, 'api'), apiTokenId: identity.tokenId };
  }

  const claims = await verifySessionToken(deps, token);
  const status = await userStatus(deps, claims.userId);
  if (!status?.active) throw new AppError('unauthorized', 'Учётная запись отключена');
  return actorOf(deps, claims.userId, status, claims.groupIds, 'session');
}
