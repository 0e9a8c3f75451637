import crypto from 'node:crypto';
import { groupMembers } from '../../db/schema';
import { createUserAccount, type AccountType } from '../../server/users/accounts';
import type { AppDeps } from '../../server/deps';
import type { Rest } from './rest';
import { TEST_ADMIN } from './constants';

export const uniq = (prefix = 't') => `${prefix}_${crypto.randomBytes(5).toString('hex')}`;

export interface TestUser {
  id: number;
  username: string;
  password: string;
  personalWorkspaceId: number;
}

/** A fresh account with a random name, optionally in some groups (e.g. the system groups). */
export async function createUser(
  deps: AppDeps,
  opts: { groupIds?: number[]; accountType?: AccountType; password?: string } = {},
): Promise<TestUser> {
  const username = uniq('user');
  const password = opts.password ?? `Pw-${crypto.randomBytes(6).toString('hex')}-1`;
  const { user, personalWorkspaceId } = await deps.db.transaction((tx) =>
    createUserAccount(tx, { username, password, accountType: opts.accountType, groupIds: opts.groupIds }),
  );
  return { id: user.id, username, password, personalWorkspaceId };
}

export async function addToGroup(deps: AppDeps, userId: number, groupId: number) {
  await deps.db.insert(groupMembers).values({ userId, groupId }).onConflictDoNothing();
}

export async function login(api: Rest, username: string, password: string): Promise<string> {
  const res = await api.post('/api/auth/login', { username, password });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token as string;
}

export const loginAdmin = (api: Rest) => login(api, TEST_ADMIN.username, TEST_ADMIN.password);

/** A system administrator of its own (tests that change admin-only state should not share the seeded one). */
export async function createSysadmin(deps: AppDeps): Promise<TestUser> {
  return createUser(deps, { groupIds: [deps.systemGroups.platformAdmins] });
}
