import { index, integer, pgTable, serial, text, timestamp, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { users } from './users';

/**
 * Refresh tokens: only the SHA-256 of the random token is stored; rotated on every use. The tokens issued from one
 * login form a family (each rotation keeps the family and points at its parent): when a token that was already used
 * comes back, someone holds a copy, and the whole family is revoked.
 */
export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    familyId: uuid('family_id').notNull().defaultRandom(),
    parentId: integer('parent_id').references((): AnyPgColumn => refreshTokens.id, { onDelete: 'set null' }),
    /** Set when the token was exchanged for its successor; revokedAt is set too, so it is no longer accepted. */
    usedAt: timestamp('used_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('refresh_tokens_user_idx').on(t.userId), index('refresh_tokens_family_idx').on(t.familyId)],
);

/** Failed logins, for throttling by (username, client address) without locking the account. */
export const loginFailures = pgTable(
  'login_failures',
  {
    id: serial('id').primaryKey(),
    key: text('key').notNull(),
    failedAt: timestamp('failed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('login_failures_key_idx').on(t.key, t.failedAt)],
);
