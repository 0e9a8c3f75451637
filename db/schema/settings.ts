import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Installation-wide key/value settings (installation settings, token switch, signing secret). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
