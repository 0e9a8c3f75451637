import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { shareLinks } from '../../db/schema/share-links';
import { dashboardRef } from '../dashboards/views';
import { userRef } from '../users/views';

/*
 * Share-link rows (tx-first, actor-free). A revoked link keeps its row (who issued what, when it was revoked) but is
 * never found again: not by its id under the dashboard, not by its token.
 */

export type ShareLinkRow = typeof shareLinks.$inferSelect;
type NewShareLink = typeof shareLinks.$inferInsert;

export async function insertShareLink(tx: DbOrTx, values: NewShareLink): Promise<ShareLinkRow> {
  const [row] = await tx.insert(shareLinks).values(values).returning();
  return row;
}

/** The links of a dashboard that are not revoked, oldest first. */
export async function dashboardShareLinks(tx: DbOrTx, dashboardId: number): Promise<ShareLinkRow[]> {
  return tx
    .select()
    .from(shareLinks)
    .where(and(eq(shareLinks.dashboardId, dashboardId), ne(shareLinks.status, 'revoked')))
    .orderBy(asc(shareLinks.id));
}

/** One link of the dashboard that is not revoked, locked for the change that follows. */
export async function lockShareLink(
  tx: DbOrTx,
  dashboardId: number,
  linkId: number,
): Promise<ShareLinkRow | undefined> {
  const [row] = await tx
    .select()
    .from(shareLinks)
    .where(and(eq(shareLinks.id, linkId), eq(shareLinks.dashboardId, dashboardId), ne(shareLinks.status, 'revoked')))
    .for('update');
  return row;
}

export async function updateShareLink(
  tx: DbOrTx,
  id: number,
  values: Partial<NewShareLink> & { bumpGrants?: boolean },
): Promise<ShareLinkRow> {
  const { bumpGrants, ...set } = values;
  const [row] = await tx
    .update(shareLinks)
    .set({
      ...set,
      updatedAt: sql`now()`,
      ...(bumpGrants ? { grantVersion: sql`${shareLinks.grantVersion} + 1` } : {}),
    })
    .where(eq(shareLinks.id, id))
    .returning();
  return row;
}

/** What the public viewer needs of a link found by its token hash (revoked links and inactive owners: none). */
export interface LinkByToken {
  id: number;
  dashboardId: number;
  dashboardName: string;
  ownerId: number;
  status: string;
  expiresAt: Date | null;
  passwordHash: string | null;
  grantVersion: number;
}

// The link's dashboard and owner, joined from what their areas offer: the public viewer finds a link in one query.
const dashboards = dashboardRef();
const users = userRef();

export async function shareLinkByTokenHash(tx: DbOrTx, tokenHash: string): Promise<LinkByToken | undefined> {
  const [row] = await tx
    .select({
      id: shareLinks.id,
      dashboardId: shareLinks.dashboardId,
      dashboardName: dashboards.name,
      ownerId: shareLinks.ownerId,
      status: shareLinks.status,
      expiresAt: shareLinks.expiresAt,
      passwordHash: shareLinks.passwordHash,
      grantVersion: shareLinks.grantVersion,
    })
    .from(shareLinks)
    .innerJoin(dashboards, eq(dashboards.id, shareLinks.dashboardId))
    .innerJoin(users, eq(users.id, shareLinks.ownerId))
    .where(and(eq(shareLinks.tokenHash, tokenHash), ne(shareLinks.status, 'revoked'), eq(users.active, true)));
  return row;
}
