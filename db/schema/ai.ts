import { integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { users } from './users';

/*
 * The AI assistant's installation state. The provider settings (GET/PUT /api/admin/ai-provider) are one row of the
 * settings table (key `ai_provider`, api_key sealed by the secret box): there is one provider per installation and
 * the settings table already gives it a cached, atomic home. Uploaded connector plugins (/api/admin/drivers) need
 * integer ids and a row each, so they have their own table.
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
