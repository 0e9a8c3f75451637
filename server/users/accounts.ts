import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { users } from '../../db/schema/users';
import { AppError } from '../kernel/errors';
import { nonBlank } from '../kernel/validation';
import { hashPassword } from '../auth/passwords';
import { addUserToGroups } from '../groups/store';
import { insertWorkspace } from '../workspaces/store';
import { insertUser } from './store';

export const ACCOUNT_TYPES = ['local', 'sso', 'service'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/**
 * The rule of a username: names people type and others pick from lists, so letters of any script, digits and a few
 * separators, no spaces. POST /api/users takes only such names, and an SSO login refuses any other before it matches
 * or creates an account.
 */
export const usernameText = () =>
  nonBlank(100).regex(/^[\p{L}\p{N}._@-]+$/u, { error: 'may contain only letters, digits and . _ @ -' });

export interface NewAccount {
  username: string;
  password?: string | null;
  fullName?: string;
  email?: string | null;
  accountType?: AccountType;
  groupIds?: number[];
  mustChangePassword?: boolean;
}

export async function findUserByUsername(db: DbOrTx, username: string) {
  const rows = await db
    .select()
    .from(users)
    .where(sql`lower(${users.username}) = lower(${username})`);
  return rows[0];
}

/**
 * Creates the account together with its personal workspace, where the user is Администратор.
 * Call inside a transaction: the two must exist together or not at all.
 */
export async function createUserAccount(tx: DbOrTx, input: NewAccount) {
  if (await findUserByUsername(tx, input.username)) {
    throw new AppError('bad_request', `Пользователь с именем «${input.username}» уже существует`);
  }
  const user = await insertUser(tx, {
    username: input.username,
    passwordHash: input.password ? await hashPassword(input.password) : null,
    fullName: input.fullName ?? '',
    email: input.email ?? null,
    accountType: input.accountType ?? 'local',
    mustChangePassword: input.mustChangePassword ?? false,
  });
  const ws = await insertWorkspace(
    tx,
    { name: `Личное пространство ${user.username}`, type: 'personal', ownerUserId: user.id, createdBy: user.id },
    user.id,
  );
  await addUserToGroups(tx, user.id, input.groupIds ?? []);
  return { user, personalWorkspaceId: ws.id };
}
