import { sha256, randomToken } from '../auth/opaque-tokens';
import { hashPassword } from '../auth/passwords';
import type { Actor } from '../auth/actor';
import { ownedObject } from '../access/object-access';
import type { AppDeps } from '../app/deps';
import type { DbOrTx } from '../../db/client';
import { invalid } from '../kernel/errors';
import { readCachesChanged } from '../kernel/read-epoch';
import { linkNotFound, MSG } from './messages';
import { dashboardShareLinks, insertShareLink, lockShareLink, updateShareLink, type ShareLinkRow } from './store';
import { getInstallationSettings } from '../service/installation';
import { shareLinkView, type ShareLinkView } from './views';

/*
 * Share links of a dashboard: GET/POST /api/dashboard/{id}/share-links, PUT/DELETE .../share-links/{linkId} and
 * POST .../{linkId}/suspend, /activate, /rotate. Only the dashboard's owner (author, edit right, workspace
 * Администратор) manages them; the link then shows the dashboard with the rights of the user who issued it.
 * Transitions: active -> suspended (/suspend), suspended -> active (/activate), a new address (/rotate, the old one
 * stops at once), revoked for good (DELETE; the link is gone from the list and its token from the viewer). An
 * expired link behaves as suspended until its expiry is moved. Every change that must end the open sessions of
 * viewers (suspend, rotate, revoke, a new or removed password) moves the grant version.
 */

/** 256 random bits, base64url: the link's address. */
const TOKEN_BYTES = 32;

export interface ShareLinkInput {
  name: string;
  password?: string;
  expires_at?: Date | null;
}

export interface ShareLinkUpdate {
  name: string;
  /** Omitted: unchanged; null: removed. */
  password?: string | null;
  /** Omitted: unchanged; null: never expires. */
  expires_at?: Date | null;
}

/**
 * Where the viewer page is reached: the installation's base address (PUT /api/settings, else PUBLIC_BASE_URL), so
 * that a link can be sent as it is; without one, the path from the root (/s/{token}).
 */
async function viewerBase(deps: AppDeps): Promise<string> {
  return ((await getInstallationSettings(deps)).base_url ?? '').replace(/\/+$/, '');
}

function checkExpiry(expiresAt: Date | null | undefined): void {
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalid({ expiresAt: MSG.expiryInPast });
}

/*
 * The viewer finds a link by the token's SHA-256 only (a hash, not a slow one: 256 random bits need no stretching).
 * A sealed copy (the secret box: AES-256-GCM under the installation's secrets key, as source credentials) is kept so
 * that the dashboard's owners see the url in the list, not only once at issue. The trade-off: the database alone
 * yields no address, but the database together with SECRETS_KEY (or DATA_DIR/secrets.key) yields every live one.
 * Revocation blanks the copy.
 */
function newToken(deps: Pick<AppDeps, 'secretBox'>) {
  const token = randomToken(TOKEN_BYTES);
  return { token, tokenHash: sha256(token), tokenSealed: deps.secretBox.seal(token) };
}

export async function listShareLinks(deps: AppDeps, actor: Actor, dashboardId: number): Promise<ShareLinkView[]> {
  await ownedObject(deps.db, actor, 'dashboard', dashboardId);
  const base = await viewerBase(deps);
  return (await dashboardShareLinks(deps.db, dashboardId)).map((row) => shareLinkView(deps, base, row));
}

export async function createShareLink(
  deps: AppDeps,
  actor: Actor,
  dashboardId: number,
  input: ShareLinkInput,
): Promise<ShareLinkView> {
  checkExpiry(input.expires_at);
  await ownedObject(deps.db, actor, 'dashboard', dashboardId);
  const { token, ...stored } = newToken(deps);
  const row = await insertShareLink(deps.db, {
    dashboardId,
    ownerId: actor.userId,
    name: input.name,
    ...stored,
    expiresAt: input.expires_at ?? null,
    passwordHash: input.password === undefined ? null : await hashPassword(input.password),
  });
  return shareLinkView(deps, await viewerBase(deps), row, token);
}

/** One change of one link under the owner's check and the row's lock; the viewers' caches forget the link after. */
async function changeLink(
  deps: AppDeps,
  actor: Actor,
  dashboardId: number,
  linkId: number,
  change: (tx: DbOrTx, row: ShareLinkRow) => Promise<ShareLinkRow>,
): Promise<ShareLinkRow> {
  return deps.db
    .transaction(async (tx) => {
      await ownedObject(tx, actor, 'dashboard', dashboardId);
      const row = await lockShareLink(tx, dashboardId, linkId);
      if (!row) throw linkNotFound(linkId);
      return change(tx, row);
    })
    .finally(() => readCachesChanged(deps));
}

export async function updateShareLinkSettings(
  deps: AppDeps,
  actor: Actor,
  dashboardId: number,
  linkId: number,
  input: ShareLinkUpdate,
): Promise<ShareLinkView> {
  checkExpiry(input.expires_at);
  // Hashed before the lock: argon2 takes tens of milliseconds.
  const passwordHash =
    input.password === undefined ? undefined : input.password === null ? null : await hashPassword(input.password);
  const row = await changeLink(deps, actor, dashboardId, linkId, (tx, current) =>
    updateShareLink(tx, current.id, {
      name: input.name,
      ...(input.expires_at !== undefined ? { expiresAt: input.expires_at } : {}),
      ...(passwordHash !== undefined ? { passwordHash, bumpGrants: true } : {}),
    }),
  );
  return shareLinkView(deps, await viewerBase(deps), row);
}

/** DELETE: revoked for good; the sealed token is dropped with it. */
export async function revokeShareLink(deps: AppDeps, actor: Actor, dashboardId: number, linkId: number) {
  const row = await changeLink(deps, actor, dashboardId, linkId, (tx, current) =>
    updateShareLink(tx, current.id, { status: 'revoked', revokedAt: new Date(), tokenSealed: '', bumpGrants: true }),
  );
  return shareLinkView(deps, await viewerBase(deps), row);
}

/** Suspending a suspended link changes nothing; its grants died when it was suspended. */
export async function suspendShareLink(deps: AppDeps, actor: Actor, dashboardId: number, linkId: number) {
  const row = await changeLink(deps, actor, dashboardId, linkId, async (tx, current) =>
    current.status === 'suspended'
      ? current
      : updateShareLink(tx, current.id, { status: 'suspended', bumpGrants: true }),
  );
  return shareLinkView(deps, await viewerBase(deps), row);
}

/** Active again (an expired link stays expired: its expiry is moved by PUT). */
export async function activateShareLink(deps: AppDeps, actor: Actor, dashboardId: number, linkId: number) {
  const row = await changeLink(deps, actor, dashboardId, linkId, async (tx, current) =>
    current.status === 'active' ? current : updateShareLink(tx, current.id, { status: 'active' }),
  );
  return shareLinkView(deps, await viewerBase(deps), row);
}

/** A new address; the old one stops working at once, and so do the grants of the old one. */
export async function rotateShareLink(deps: AppDeps, actor: Actor, dashboardId: number, linkId: number) {
  const { token, ...stored } = newToken(deps);
  const row = await changeLink(deps, actor, dashboardId, linkId, (tx, current) =>
    updateShareLink(tx, current.id, { ...stored, bumpGrants: true }),
  );
  return shareLinkView(deps, await viewerBase(deps), row, token);
}
