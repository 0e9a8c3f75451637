import type { AppDeps } from '../app/deps';
import type { ShareLinkRow } from './store';

export type ShareLinkStatus = 'active' | 'suspended' | 'expired' | 'revoked';

/** The status a caller sees: an active link past its expiry is `expired` (and behaves as suspended). */
export function statusOf(row: Pick<ShareLinkRow, 'status' | 'expiresAt'>, now = Date.now()): ShareLinkStatus {
  if (row.status === 'revoked' || row.status === 'suspended') return row.status;
  return row.expiresAt && row.expiresAt.getTime() <= now ? 'expired' : 'active';
}

/** A link in the list and after every change; `token` only where it was just issued (create, rotate). */
export function shareLinkView(deps: Pick<AppDeps, 'secretBox'>, baseUrl: string, row: ShareLinkRow, token?: string) {
  const revoked = row.status === 'revoked';
  const plain = token ?? (revoked ? null : deps.secretBox.open<string>(row.tokenSealed));
  return {
    link_id: row.id,
    dashboard_id: row.dashboardId,
    name: row.name,
    url: plain === null ? null : `${baseUrl}/s/${plain}`,
    ...(token !== undefined ? { token } : {}),
    status: statusOf(row),
    password_protected: row.passwordHash !== null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    owner_id: row.ownerId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type ShareLinkView = ReturnType<typeof shareLinkView>;
