import { readableObject } from '../access/object-access';
import type { Viewer } from '../access/viewer';
import { actorOfUser, type Actor } from '../auth/actor';
import { sha256 } from '../auth/opaque-tokens';
import { verifyPassword } from '../auth/passwords';
import type { AppDeps } from '../app/deps';
import { AppError, badRequest } from '../kernel/errors';
import { READ_DECISION_TTL_MS } from '../kernel/read-epoch';
import { TtlCache } from '../kernel/ttl-cache';
import { grantValid, issueGrant } from './grants';
import { grantRequired, linkExpired, linkSuspended, MSG, publicLinkNotFound } from './messages';
import { shareLinkByTokenHash, type LinkByToken } from './store';
import { clearUnlockFailures, reserveUnlockAttempt } from './unlock-throttle';
import { statusOf, type ShareLinkStatus } from './views';

/*
 * How the public viewer (/api/public/link/{token}/...) finds a share link and whose eyes it reads through. A token
 * that is unknown, malformed, rotated away, revoked, of a deleted dashboard, of an owner no longer active or no longer
 * able to read the dashboard gets one and the same 404: nothing tells them apart. A suspended or expired link answers its state only. A password
 * link answers its state only until /unlock: everything else needs a valid grant in X-Share-Grant.
 */

/** The tokens this platform issues: 32 random bytes in base64url. Anything else is unknown without a lookup. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

interface FoundLink extends LinkByToken {
  owner: Actor;
}

// Links by token hash per app (its deps), keyed with the read epoch: every change of a link, of its dashboard or of
// its owner's rights bumps it, so this node never serves a stale link; other nodes for at most the TTL. Entries are
// promises: the viewers of one link arriving together look it up once.
const caches = new WeakMap<object, TtlCache<string, Promise<FoundLink>>>();
function linkCache(deps: AppDeps): TtlCache<string, Promise<FoundLink>> {
  let cache = caches.get(deps.caches);
  if (!cache) {
    cache = new TtlCache(READ_DECISION_TTL_MS);
    caches.set(deps.caches, cache);
  }
  return cache;
}

async function lookUpLink(deps: AppDeps, hash: string): Promise<FoundLink> {
  const row = await shareLinkByTokenHash(deps.db, hash);
  const owner = row && (await actorOfUser(deps, row.ownerId));
  if (!row || !owner || !(await ownerReads(deps, owner, row.dashboardId))) throw publicLinkNotFound();
  return { ...row, owner };
}

// Checked here, for every path (the state and /unlock too): a link whose owner lost the dashboard (removed from its
// workspace, the right taken away) must not tell even that it is active, or the dashboard's name.
async function ownerReads(deps: AppDeps, owner: Actor, dashboardId: number): Promise<boolean> {
  try {
    await readableObject(deps.db, owner, 'dashboard', dashboardId);
    return true;
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'not_found' || err.kind === 'forbidden')) return false;
    throw err;
  }
}

function findLink(deps: AppDeps, token: string): Promise<FoundLink> {
  if (!TOKEN_SHAPE.test(token)) return Promise.reject(publicLinkNotFound());
  const hash = sha256(token);
  const key = `${deps.caches.readEpoch.value}:${hash}`;
  const cache = linkCache(deps);
  let found = cache.get(key);
  if (!found) {
    found = lookUpLink(deps, hash);
    // An unknown token is not kept: guessed tokens must not fill the cache.
    found.catch(() => cache.delete(key));
    cache.set(key, found);
  }
  return found;
}

export interface LinkState {
  status: Exclude<ShareLinkStatus, 'revoked'>;
  password_required: boolean;
  /** True when the link may be viewed now (active, and unlocked when it has a password). */
  unlocked: boolean;
  /** Shown only to whoever may view the link. */
  dashboard_name: string | null;
}

/** GET /api/public/link/{token}: the link's state, all a suspended, expired or locked link tells. */
export async function shareLinkState(deps: AppDeps, token: string, grant: string | undefined): Promise<LinkState> {
  const link = await findLink(deps, token);
  const status = statusOf(link) as LinkState['status'];
  const unlocked = status === 'active' && (link.passwordHash === null || grantValid(deps, link, grant));
  return {
    status,
    password_required: link.passwordHash !== null,
    unlocked,
    dashboard_name: unlocked ? link.dashboardName : null,
  };
}

function assertViewable(link: FoundLink): void {
  const status = statusOf(link);
  if (status === 'suspended') throw linkSuspended();
  if (status === 'expired') throw linkExpired();
}

export interface SharedDashboard {
  dashboardId: number;
  /** The link's owner: the dashboard, its widgets and their rows are read with the owner's rights. */
  viewer: Viewer;
}

/** Every viewer path but the state and /unlock: an active link, unlocked when it has a password. */
export async function openSharedDashboard(
  deps: AppDeps,
  token: string,
  grant: string | undefined,
): Promise<SharedDashboard> {
  const link = await findLink(deps, token);
  assertViewable(link);
  if (link.passwordHash !== null && !grantValid(deps, link, grant)) throw grantRequired();
  return {
    dashboardId: link.dashboardId,
    viewer: { actor: link.owner, requestedBy: link.owner, reason: 'share-link' },
  };
}

/** POST /api/public/link/{token}/unlock: the password for a grant, throttled per link and client address. */
export async function unlockShareLink(deps: AppDeps, token: string, password: string, ip: string) {
  const link = await findLink(deps, token);
  assertViewable(link);
  if (link.passwordHash === null) throw badRequest(MSG.noPassword);
  await reserveUnlockAttempt(deps.db, link.id, ip);
  if (!(await verifyPassword(link.passwordHash, password))) throw new AppError('unauthorized', MSG.wrongPassword);
  await clearUnlockFailures(deps.db, link.id, ip);
  return issueGrant(deps, link);
}
