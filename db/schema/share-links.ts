import { index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { dashboards } from './dashboards';
import { users } from './users';

/**
 * Share links of a dashboard (/api/dashboard/{id}/share-links, viewed at /api/public/link/{token}). The token is a
 * random string of 256 bits; only its SHA-256 is looked up (`token_hash`), and the token itself is kept sealed by the
 * installation's secret box so that the owner can copy the address again from the list. `status` is active,
 * suspended or revoked (revoked for good); an expired link behaves as suspended. `grant_version` is part of every
 * unlock grant: rotation, suspension, revocation and a password change move it, so earlier grants die at once.
 * The link reads the dashboard with the rights of its owner. Deleting the dashboard takes its links with it (a dead
 * token answers exactly as an unknown one).
 */
export const shareLinks = pgTable(
  'share_links',
  {
    id: serial('id').primaryKey(),
    dashboardId: integer('dashboard_id')
      .notNull()
      .references(() => dashboards.id, { onDelete: 'cascade' }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    tokenSealed: text('token_sealed').notNull(),
    status: text('status').notNull().default('active'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    passwordHash: text('password_hash'),
    grantVersion: integer('grant_version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('share_links_dashboard_idx').on(t.dashboardId)],
);

/** Failed unlocks of a password link, for throttling by (link, client address). */
export const shareLinkUnlockFailures = pgTable(
  'share_link_unlock_failures',
  {
    id: serial('id').primaryKey(),
    key: text('key').notNull(),
    failedAt: timestamp('failed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('share_link_unlock_failures_key_idx').on(t.key, t.failedAt)],
);
