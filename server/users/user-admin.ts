import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import { revokeUserApiTokens } from '../mcp-tokens/mcp-tokens';
import { existingGroupIds } from '../groups/store';
import { passwordWeakness } from '../auth/passwords';
import { revokeUserRefreshTokens } from '../auth/refresh-tokens';
import { forgetUserStatus, type Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { AppError, badRequest, invalid } from '../kernel/errors';
import { createUserAccount, type AccountType } from './accounts';
import { isForeignKeyViolation, isUniqueViolation } from '../kernel/db-errors';
import { updateUser as updateUserRow } from './store';
import { findUserOr404, userRecord, type UserRecord } from './views';

export interface CreateUserInput {
  username: string;
  password?: string;
  full_name?: string;
  email?: string | null;
  account_type?: AccountType;
  group_ids?: number[];
}

export interface UpdateUserInput {
  full_name?: string;
  email?: string | null;
  account_type?: AccountType;
  active?: boolean;
}

const duplicateUsername = (username: string) => badRequest(`Пользователь с именем «${username}» уже существует`);

/** 422 naming each id of `ids` that is not a group, at its position in the body (`groupIds[2]`). */
async function assertGroupsExist(db: DbOrTx, ids: readonly number[], field: string): Promise<void> {
  const known = await existingGroupIds(db, ids);
  const errors: Record<string, string> = {};
  ids.forEach((id, i) => {
    if (!known.has(id)) errors[`${field}[${i}]`] = `Группа не найдена (id ${id})`;
  });
  if (Object.keys(errors).length) throw invalid(errors);
}

/**
 * Makes every credential of the user stop working now: refresh and API tokens are revoked, and the cached account
 * status is dropped so that a session token still in flight is checked against the database on its next request.
 */
async function cutOffSessions(deps: AppDeps, tx: DbOrTx, userId: number): Promise<void> {
  await revokeUserRefreshTokens(tx, userId);
  await revokeUserApiTokens(deps, tx, userId);
}

export async function createUser(deps: AppDeps, input: CreateUserInput): Promise<UserRecord> {
  const accountType = input.account_type ?? 'local';
  // A local account logs in with its password; SSO and service accounts may have none.
  if (accountType === 'local' && !input.password) throw invalid({ password: 'must not be blank' });
  if (input.password !== undefined) {
    const weakness = passwordWeakness(input.password, input.username);
    if (weakness) throw invalid({ password: weakness });
  }
  try {
    return await deps.db.transaction(async (tx) => {
      await assertGroupsExist(tx, input.group_ids ?? [], 'groupIds');
      const { user } = await createUserAccount(tx, {
        username: input.username,
        password: input.password,
        fullName: input.full_name,
        email: input.email ?? null,
        accountType,
        groupIds: input.group_ids,
      });
      return userRecord(tx, user);
    });
  } catch (e) {
    if (isUniqueViolation(e, 'users_username_lower_uq')) throw duplicateUsername(input.username);
    // A group deleted between our check and the insert.
    if (isForeignKeyViolation(e)) throw invalid({ groupIds: 'Группа не найдена' });
    throw e;
  }
}

export async function updateUser(deps: AppDeps, actor: Actor, id: number, input: UpdateUserInput): Promise<UserRecord> {
  if (input.active === false && id === actor.userId) throw badRequest('Нельзя отключить собственную учётную запись');
  const record = await deps.db.transaction(async (tx) => {
    const before = await findUserOr404(tx, id, { forUpdate: true });
    const after = await updateUserRow(tx, id, {
      ...(input.full_name !== undefined && { fullName: input.full_name }),
      ...(input.email !== undefined && { email: input.email }),
      ...(input.account_type !== undefined && { accountType: input.account_type }),
      ...(input.active !== undefined && { active: input.active }),
    });
    if (before.active && !after.active) await cutOffSessions(deps, tx, id);
    return userRecord(tx, after);
  });
  // Status and account type are cached for authentication: a change must apply to the very next request.
  forgetUserStatus(deps, id);
  readCachesChanged(deps); // an account switched off no longer lends its datasets a right to other workspaces' sources
  return record;
}

export async function deleteUser(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  if (id === actor.userId) throw badRequest('Нельзя удалить собственную учётную запись');
  try {
    await deps.db.transaction(async (tx) => {
      await findUserOr404(tx, id, { forUpdate: true });
      await cutOffSessions(deps, tx, id);
      // The personal workspace, memberships and attributes go with the account (foreign keys cascade).
      await tx.delete(users).where(eq(users.id, id));
    });
  } catch (e) {
    if (isForeignKeyViolation(e)) {
      throw new AppError(
        'bad_request',
        'Учётную запись нельзя удалить: на неё ссылаются другие объекты. Отключите её (active = false)',
      );
    }
    throw e;
  } finally {
    forgetUserStatus(deps, id);
    readCachesChanged(deps);
  }
  return { id, deleted: true };
}
