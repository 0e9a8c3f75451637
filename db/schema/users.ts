import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** Local and SSO accounts. Usernames are unique regardless of case. */
export const users = pgTable(
  'users',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull(),
    passwordHash: text('password_hash'),
    fullName: text('full_name').notNull().default(''),
    email: text('email'),
    accountType: text('account_type').notNull().default('local'),
    active: boolean('active').notNull().default(true),
    mustChangePassword: boolean('must_change_password').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_username_lower_uq').on(sql`lower(${t.username})`)],
);

/** Key -> list of values, read by row-level security rules. */
export const userAttributes = pgTable(
  'user_attributes',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    values: text('values').array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.key] }), index('user_attributes_key_idx').on(t.key)],
);
