import { eq } from 'drizzle-orm';
import { users } from '../../db/schema/users';
import type { AppDeps, UserStatus } from '../app/deps';
import { userGroupIds } from '../users/accounts';

/** Who is calling. For a session token the groups are those at login; for an API token, the owner's current ones. */
export interface Actor {
  userId: number;
  username: string;
  accountType: string;
  groupIds: number[];
  isSysadmin: boolean;
  isWorkspaceManager: boolean;
  tokenKind: 'session' | 'api';
  apiTokenId?: number;
}

export function actorOf(
  deps: Pick<AppDeps, 'systemGroups'>,
  userId: number,
  status: UserStatus,
  groupIds: number[],
  kind: Actor['tokenKind'],
): Actor {
  return {
    userId,
    username: status.username,
    accountType: status.accountType,
    groupIds,
    isSysadmin: groupIds.includes(deps.systemGroups.platformAdmins),
    isWorkspaceManager: groupIds.includes(deps.systemGroups.workspaceManagers),
    tokenKind: kind,
  };
}

/**
 * The user as an actor with their current groups (as an API token acts), for reading as them (view_as_user_id).
 * Null when the account does not exist.
 */
export async function actorOfUser(deps: Pick<AppDeps, 'db' | 'systemGroups'>, userId: number): Promise<Actor | null> {
  const [status] = await deps.db
    .select({ username: users.username, accountType: users.accountType, active: users.active })
    .from(users)
    .where(eq(users.id, userId));
  if (!status) return null;
  return actorOf(deps, userId, status, await userGroupIds(deps.db, userId), 'api');
}
