import type { Actor } from '../auth/actor';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from '../auth/login-throttle';
import { hashPassword, passwordWeakness, verifyPassword } from '../auth/passwords';
import { revokeUserRefreshTokens } from '../auth/refresh-tokens';
import type { AppDeps } from '../app/deps';
import { badRequest, invalid } from '../kernel/errors';
import { updateUser } from './store';
import { findUserOr404 } from './views';

export interface ChangeOwnPasswordInput {
  old_password: string;
  new_password: string;
}

export interface ResetPasswordInput {
  new_password: string;
  must_change?: boolean;
}

/**
 * The old password is checked under the login throttle: a stolen session token must not become a way to guess the
 * password at full speed. Other sessions end at their next refresh (refresh tokens are revoked).
 */
export async function changeOwnPassword(deps: AppDeps, actor: Actor, input: ChangeOwnPasswordInput, ip: string) {
  const attempt = await reserveLoginAttempt(deps.db, actor.username, ip);
  const user = await findUserOr404(deps.db, actor.userId);
  if (!user.passwordHash) {
    await releaseLoginAttempt(deps.db, attempt);
    throw badRequest('У учётной записи нет локального пароля: вход выполняется через внешнего провайдера');
  }
  if (!(await verifyPassword(user.passwordHash, input.old_password))) throw badRequest('Текущий пароль указан неверно');
  // The old password was right from here on: a refusal below is not a guess.
  const weakness = passwordWeakness(input.new_password, user.username);
  if (weakness) {
    await releaseLoginAttempt(deps.db, attempt);
    throw invalid({ newPassword: weakness });
  }
  if (input.new_password === input.old_password) {
    await releaseLoginAttempt(deps.db, attempt);
    throw invalid({ newPassword: 'Новый пароль должен отличаться от текущего' });
  }
  const passwordHash = await hashPassword(input.new_password);
  await deps.db.transaction(async (tx) => {
    await updateUser(tx, user.id, { passwordHash, mustChangePassword: false });
    await revokeUserRefreshTokens(tx, user.id);
  });
  await clearLoginFailures(deps.db, actor.username, ip);
  return { changed: true as const };
}

/** A system administrator sets a new password; by default the user must change it at the next login. */
export async function resetPassword(deps: AppDeps, id: number, input: ResetPasswordInput) {
  const user = await findUserOr404(deps.db, id);
  const weakness = passwordWeakness(input.new_password, user.username);
  if (weakness) throw invalid({ newPassword: weakness });
  const passwordHash = await hashPassword(input.new_password);
  const mustChange = input.must_change ?? true;
  await deps.db.transaction(async (tx) => {
    await findUserOr404(tx, id, { forUpdate: true });
    await updateUser(tx, id, { passwordHash, mustChangePassword: mustChange });
    await revokeUserRefreshTokens(tx, id);
  });
  return { id, must_change_password: mustChange };
}
