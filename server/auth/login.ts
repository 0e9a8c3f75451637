import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { userGroupIds } from '../groups/store';
import { findUserByUsername } from '../users/accounts';
import { accountStatus } from '../users/store';
import { burnPasswordCheck, verifyPassword } from './passwords';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from './login-throttle';
import {
  consumeRefreshToken,
  issueRefreshToken,
  revokeUserRefreshTokens,
  type ConsumeResult,
  type TokenLineage,
} from './refresh-tokens';
import { SESSION_TOKEN_TTL_SECONDS, issueSessionToken } from './session-tokens';

export interface LoginResult {
  token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

const BAD_CREDENTIALS = 'Неверное имя пользователя или пароль';

/** The login result of POST /api/auth/login for a settled identity; POST /api/auth/sso/exchange answers it too. */
export async function sessionFor(
  deps: AppDeps,
  db: DbOrTx,
  userId: number,
  lineage?: TokenLineage,
): Promise<LoginResult> {
  const groupIds = await userGroupIds(db, userId);
  return {
    token: await issueSessionToken(deps, { userId, groupIds }),
    refresh_token: await issueRefreshToken(db, userId, lineage),
    token_type: 'Bearer',
    expires_in: SESSION_TOKEN_TTL_SECONDS,
  };
}

export async function login(
  deps: AppDeps,
  input: { username: string; password: string },
  ip: string,
): Promise<LoginResult> {
  // Booked before the hash is checked: a refused attempt never reaches argon2, and concurrent guesses cannot
  // overtake the count.
  const attempt = await reserveLoginAttempt(deps.db, input.username, ip);
  const user = await findUserByUsername(deps.db, input.username);
  if (!user) {
    await burnPasswordCheck(input.password);
    throw new AppError('unauthorized', BAD_CREDENTIALS);
  }
  if (!(await verifyPassword(user.passwordHash, input.password))) throw new AppError('unauthorized', BAD_CREDENTIALS);
  if (!user.active) {
    // The password was right: not a guess, so it does not count against the address.
    await releaseLoginAttempt(deps.db, attempt);
    throw new AppError('unauthorized', 'Учётная запись отключена');
  }
  await clearLoginFailures(deps.db, input.username, ip);
  return sessionFor(deps, deps.db, user.id);
}

/** Where a refresh-token reuse is reported: the request's logger (pino), or nothing. */
export interface SecurityLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

const BAD_REFRESH_TOKEN = 'Недействительный или просроченный токен обновления';

/**
 * Rotation: the presented refresh token is spent and a new pair is issued with the user's current groups, in the
 * same family. Spending and issuing are one transaction, so a replay racing the rotation waits for it and then
 * revokes the successor as well. A replay of a spent token answers 401 like any bad token (the caller learns
 * nothing) and is logged, since it means the token was copied.
 */
export async function refresh(deps: AppDeps, refreshToken: string, log?: SecurityLog): Promise<LoginResult> {
  type Outcome = Exclude<ConsumeResult, { ok: true }> | { ok: true; session: LoginResult | null };
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const consumed = await consumeRefreshToken(tx, refreshToken);
    if (!consumed.ok) return consumed;
    const user = await accountStatus(tx, consumed.userId);
    if (!user?.active) return { ok: true, session: null };
    return { ok: true, session: await sessionFor(deps, tx, consumed.userId, consumed.lineage) };
  });
  if (!outcome.ok) {
    if (outcome.reused) {
      log?.warn(
        {
          event: 'refresh_token_reuse',
          userId: outcome.reused.userId,
          familyId: outcome.reused.familyId,
          revoked: outcome.reused.revoked,
        },
        'spent refresh token presented again: its whole family is revoked',
      );
    }
    throw new AppError('unauthorized', BAD_REFRESH_TOKEN);
  }
  if (outcome.session === null) throw new AppError('unauthorized', 'Учётная запись отключена');
  return outcome.session;
}

export async function logout(deps: AppDeps, userId: number): Promise<void> {
  await revokeUserRefreshTokens(deps.db, userId);
}
