import { sql } from 'drizzle-orm';
import { check, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * An SMTP server letters go out through (/api/mail-channels). The password lives only sealed (server/secrets), never
 * in a readable column: a read answers it masked.
 */
export const mailChannels = pgTable(
  'mail_channels',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    host: text('host').notNull(),
    port: integer('port').notNull(),
    security: text('security').notNull().default('starttls'),
    username: text('username').notNull().default(''),
    /** The secret box of the password (null: no authentication). */
    passwordBox: text('password_box'),
    fromAddress: text('from_address').notNull(),
    fromName: text('from_name').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('mail_channels_security_ck', sql`${t.security} in ('none', 'starttls', 'ssl')`)],
);
