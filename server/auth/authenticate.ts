import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { userGroupIds } from '../groups/store';
import { actorOf, userStatusOf, type Actor } from './actor';
import { API_TOKEN_PREFIX, apiTokenIdentity, assertApiTokensUsable, touchApiToken } from '../mcp-tokens/mcp-tokens';
import { sha256 } from './opaque-tokens';
import { verifySessionToken } from './session-tokens';

/** Resolves the Authorization header to the caller, or throws 401 (403 for a token kind switched off). */
export async function authenticate(deps: AppDeps, authorization: string | undefined): Promise<Actor> {
  if (!authorization) throw new AppError('unauthorized', 'Требуется заголовок Authorization: Bearer <токен>');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new AppError('unauthorized', 'Неверный формат заголовка Authorization');
  const token = match[1];

  if (token.startsWith(API_TOKEN_PREFIX)) {
    const hash = sha256(token);
    const identity = await apiTokenIdentity(deps, hash);
    if (!identity || identity.status === 'revoked') throw new AppError('unauthorized', 'Недействительный токен');
    if (identity.status === 'suspended') throw new AppError('unauthorized', 'Токен приостановлен');
    const status = await userStatusOf(deps, identity.userId);
    if (!status?.active) throw new AppError('unauthorized', 'Учётная запись отключена');
    // An API token always acts with its owner's current groups.
    const groupIds = await userGroupIds(deps.db, identity.userId);
    await assertApiTokensUsable(deps, { accountType: status.accountType, groupIds });
    touchApiToken(deps, identity.tokenId);
    return { ...actorOf(deps, identity.userId, status, groupIds, 'api'), apiTokenId: identity.tokenId };
  }

  // Every request of a signed-in user: a token verified before and a cached status are taken without waiting.
  const verifying = verifySessionToken(deps, token);
  const claims = verifying instanceof Promise ? await verifying : verifying;
  const loading = userStatusOf(deps, claims.userId);
  const status = loading instanceof Promise ? await loading : loading;
  if (!status?.active) throw new AppError('unauthorized', 'Учётная запись отключена');
  return actorOf(deps, claims.userId, status, claims.groupIds, 'session');
}
