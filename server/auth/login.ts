import { eq } from 'drizzle-orm';
import { users } from '../../db/schema';
import type { AppDeps } from '../deps';
import { AppError } from '../errors';
import { findUserByUsername, userGroupIds } from '../users/accounts';
import { burnPasswordCheck, verifyPassword } from './passwords';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from './login-throttle';
import { consumeRefreshToken, issueRefreshToken, revokeUserRefreshTokens } from './refresh-tokens';
import { SESSION_TOKEN_TTL_SECONDS, issueSessionToken } from './session-tokens';

export interface LoginResult {
  token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

const BAD_CREDENTIALS = 'Неверное имя пользователя или пароль';

async function sessionFor(deps: AppDeps, userId: number): Promise<LoginResult> {
  const groupIds = await userGroupIds(deps.db, userId);
  return {
    token: await issueSessionToken(deps.signingKey, { userId, groupIds }),
    refresh_token: await issueRefreshToken(deps.db, userId),
    token_type: 'Bearer',
    expires_in: SESSION_TOKEN_TTL_SECONDS,
  };
}

export async function login(deps: AppDeps, input: { username: string; password: string }, ip: string): Promise<LoginResult> {
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
  return sessionFor(deps, user.id);
}

/** Rotation: the presented refresh token is spent and a new pair is issued with the user's current groups. */
export async function refresh(deps: AppDeps, refreshToken: string): Promise<LoginResult> {
  const userId = await consumeRefreshToken(deps.db, refreshToken);
  if (userId === null) throw new AppError('unauthorized', 'Недействительный или просроченный токен обновления');
  const [user] = await deps.db.select({ active: users.active }).from(users).where(eq(users.id, userId));
  if (!user?.active) throw new AppError('unauthorized', 'Учётная запись отключена');
  return sessionFor(deps, userId);
}

export async function logout(deps: AppDeps, userId: number): Promise<void> {
  await revokeUserRefreshTokens(deps.db, userId);
}
