import { integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { users } from './users';

/*
 * Uploaded connector plugins (/api/admin/drivers), owned by server/admin (drivers.ts, store.ts). They need integer ids
 * and a row each, so they have a table of their own (installation-wide settings such as the AI provider are rows of
 * the settings table).
 */

/**
 * A connector plugin uploaded by a system administrator: an ES module stored as DATA_DIR/drivers/<sha256>.mjs and
 * loaded with a dynamic import (no restart). `source_type` is the kind it serves; a source kind picks it with
 * PUT /api/source-types/{type} (driver_id = String(id)), and then the plugin cannot be deleted.
 */
export const driverPlugins = pgTable('driver_plugins', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  sourceType: text('source_type').notNull(),
  version: text('version').notNull(),
  sha256: text('sha256').notNull(),
  filePath: text('file_path').notNull(),
  uploadedBy: integer('uploaded_by').references(() => users.id, { onDelete: 'set null' }),
  uploadedAt: timestamp('uploaded_at', { withTimezone: true }).notNull().defaultNow(),
});
