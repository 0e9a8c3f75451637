import { and, asc, count, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { apiTokens } from '../../db/schema/api-tokens';
import type { AppDeps } from '../app/deps';
import { existingGroupIds } from '../groups/store';
import { cacheSlot } from '../kernel/app-caches';
import { AppError, invalid, notFound } from '../kernel/errors';
import { TtlCache } from '../kernel/ttl-cache';
import type { Actor } from '../auth/actor';
import { getApiTokenSettings, saveApiTokenSettings, type ApiTokenSettings } from './settings';
import { randomToken, sha256 } from '../auth/opaque-tokens';
import { pageOf, type PageRequest } from '../kernel/paging';
import { evictEverywhere } from '../kernel/cache-changes';

/** Every API token starts with this: the platform tells the token kinds apart by it. */
export const API_TOKEN_PREFIX = 'apt_';
const TOKENS_DISABLED = 'Выпуск и работа MCP-токенов отключены администратором платформы';

/** Issue and use need the switch on, an allowed account type and (when set) the access group. */
export async function assertApiTokensUsable(
  deps: AppDeps,
  who: { accountType: string; groupIds: number[] },
): Promise<void> {
  const s = await getApiTokenSettings(deps);
  const allowed =
    s.enabled &&
    (s.allowed_account_types as string[]).includes(who.accountType) &&
    (s.access_group_id === null || who.groupIds.includes(s.access_group_id));
  if (!allowed) throw new AppError('forbidden', TOKENS_DISABLED);
}

type TokenRow = typeof apiTokens.$inferSelect;
function tokenView(t: TokenRow) {
  return {
    id: t.id,
    user_id: t.userId,
    name: t.name,
    description: t.description,
    token_hint: t.tokenHint,
    status: t.status as 'active' | 'suspended' | 'revoked',
    created_at: t.createdAt.toISOString(),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

export async function createApiToken(deps: AppDeps, actor: Actor, input: { name: string; description?: string }) {
  await assertApiTokensUsable(deps, actor);
  const token = API_TOKEN_PREFIX + randomToken(32);
  const [row] = await deps.db
    .insert(apiTokens)
    .values({
      userId: actor.userId,
      name: input.name,
      description: input.description ?? '',
      tokenHash: sha256(token),
      tokenHint: `${token.slice(0, API_TOKEN_PREFIX.length + 4)}…${token.slice(-4)}`,
    })
    .returning();
  return { ...tokenView(row), token };
}

export async function listApiTokens(deps: AppDeps, actor: Actor, input: PageRequest & { userId?: number }) {
  const ownerId = input.userId !== undefined && actor.isSysadmin ? input.userId : actor.userId;
  if (input.userId !== undefined && !actor.isSysadmin && input.userId !== actor.userId) throw new AppError('forbidden');
  const where = eq(apiTokens.userId, ownerId);
  const sortable = {
    id: apiTokens.id,
    name: apiTokens.name,
    created_at: apiTokens.createdAt,
    status: apiTokens.status,
  };
  const order = input.sort
    ? (sortable as Record<string, (typeof sortable)[keyof typeof sortable]>)[input.sort.field]
    : undefined;
  if (input.sort && !order) throw invalid({ sort: `unknown sort field: ${input.sort.field}` });
  const [{ total }] = await deps.db.select({ total: count() }).from(apiTokens).where(where);
  const rows = await deps.db
    .select()
    .from(apiTokens)
    .where(where)
    .orderBy(
      order ? (input.sort!.direction === 'desc' ? desc(order) : asc(order)) : desc(apiTokens.id),
      desc(apiTokens.id),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(rows.map(tokenView), input, total);
}

async function ownToken(deps: AppDeps, actor: Actor, id: number, allowSysadmin: boolean) {
  const [row] = await deps.db.select().from(apiTokens).where(eq(apiTokens.id, id));
  if (!row || (row.userId !== actor.userId && !(allowSysadmin && actor.isSysadmin))) {
    throw notFound(`Токен не найден (id ${id})`);
  }
  return row;
}

interface ApiTokenIdentity {
  tokenId: number;
  userId: number;
  status: string;
}

/*
 * Read on every call made with an API token, so kept a few seconds by the token's hash; the node that changes a
 * token's status drops its entry at once, other nodes within the TTL.
 */
const apiTokenIdentities = cacheSlot(
  'mcpTokens.identities',
  () => new TtlCache<string, ApiTokenIdentity | null>(5_000),
);
/** When this app last wrote a token's last_used_at. */
const apiTokenTouches = cacheSlot('mcpTokens.touches', () => new Map<number, number>());

/** The token (by its hash) with its owner and status; null when no token has that hash. */
export function apiTokenIdentity(deps: AppDeps, hash: string): Promise<ApiTokenIdentity | null> {
  return deps.caches.of(apiTokenIdentities).getOrLoad(hash, async () => {
    const [row] = await deps.db
      .select({ tokenId: apiTokens.id, userId: apiTokens.userId, status: apiTokens.status })
      .from(apiTokens)
      .where(eq(apiTokens.tokenHash, hash));
    return row ?? null;
  });
}

async function setStatus(deps: AppDeps, row: TokenRow, status: 'active' | 'suspended' | 'revoked') {
  const [updated] = await deps.db
    .update(apiTokens)
    .set({ status, revokedAt: status === 'revoked' ? sql`now()` : null })
    .where(eq(apiTokens.id, row.id))
    .returning();
  evictEverywhere(deps, apiTokenIdentities, row.tokenHash);
  return tokenView(updated);
}

export async function revokeApiToken(deps: AppDeps, actor: Actor, id: number) {
  const row = await ownToken(deps, actor, id, true);
  if (row.status === 'revoked') return tokenView(row);
  return setStatus(deps, row, 'revoked');
}

export async function suspendApiToken(deps: AppDeps, actor: Actor, id: number) {
  const row = await ownToken(deps, actor, id, true);
  if (row.status === 'revoked') throw new AppError('bad_request', 'Отозванный токен нельзя приостановить');
  return setStatus(deps, row, 'suspended');
}

export async function activateApiToken(deps: AppDeps, actor: Actor, id: number) {
  const row = await ownToken(deps, actor, id, true);
  if (row.status === 'revoked') throw new AppError('bad_request', 'Отозванный токен нельзя возобновить');
  return setStatus(deps, row, 'active');
}

/** Revokes every token of a user (account deleted or disabled). */
export async function revokeUserApiTokens(deps: AppDeps, db: DbOrTx, userId: number) {
  const rows = await db
    .update(apiTokens)
    .set({ status: 'revoked', revokedAt: sql`now()` })
    .where(and(eq(apiTokens.userId, userId), sql`${apiTokens.status} <> 'revoked'`))
    .returning({ hash: apiTokens.tokenHash });
  for (const r of rows) evictEverywhere(deps, apiTokenIdentities, r.hash);
}

/**
 * last_used_at is written at most once a minute per token: a write per request would cost more than the request.
 * When this app last wrote it is in its touch times.
 */
export function touchApiToken(deps: AppDeps, tokenId: number): void {
  const now = Date.now();
  const lastTouched = deps.caches.of(apiTokenTouches);
  if ((lastTouched.get(tokenId) ?? 0) > now - 60_000) return;
  lastTouched.set(tokenId, now);
  deps.db
    .update(apiTokens)
    .set({ lastUsedAt: sql`now()` })
    .where(eq(apiTokens.id, tokenId))
    .catch(() => undefined);
}

export async function updateApiTokenSettings(deps: AppDeps, input: ApiTokenSettings) {
  if (input.access_group_id !== null) {
    const known = await existingGroupIds(deps.db, [input.access_group_id]);
    if (!known.has(input.access_group_id))
      throw invalid({ accessGroupId: `Группа не найдена (id ${input.access_group_id})` });
  }
  return saveApiTokenSettings(deps, deps.db, input);
}

export { getApiTokenSettings };
