import type { AppDeps } from '../app/deps';
import { userGroupIds } from '../groups/store';
import { cacheSlot } from '../kernel/app-caches';
import { TtlCache } from '../kernel/ttl-cache';
import { accountStatus, type AccountStatus } from '../users/store';
import { evictEverywhere } from '../kernel/cache-changes';

/** What authentication needs of an account on every request (server/auth/authenticate.ts). */
export type UserStatus = AccountStatus;

/*
 * Read on every authenticated request, so kept a few seconds; the node that changes an account drops its entry at
 * once (forgetUserStatus), other nodes within the TTL.
 */
const userStatuses = cacheSlot('auth.userStatus', () => new TtlCache<number, UserStatus | null>(5_000));

/** The account's status (null: no such user), cached; a cached one is answered as it is, not in a promise. */
export function userStatusOf(
  deps: Pick<AppDeps, 'db' | 'caches'>,
  userId: number,
): UserStatus | null | Promise<UserStatus | null> {
  return deps.caches.of(userStatuses).getOrLoadNow(userId, async () => (await accountStatus(deps.db, userId)) ?? null);
}

/** After a change of the account (deactivated, deleted, its type changed). */
export function forgetUserStatus(deps: Pick<AppDeps, 'caches'>, userId: number): void {
  evictEverywhere(deps, userStatuses, userId);
}

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
  const status = await accountStatus(deps.db, userId);
  if (!status) return null;
  return actorOf(deps, userId, status, await userGroupIds(deps.db, userId), 'api');
}
