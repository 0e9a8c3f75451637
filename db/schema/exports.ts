import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { users } from './users';

/**
 * One file export job (POST /api/exports, GET /api/exports/{jobId}, GET /api/exports/{jobId}/file). The file lives in
 * the data directory until expires_at; the cleanup removes the file and the row's path together.
 */
export const exportJobs = pgTable(
  'export_jobs',
  {
    id: serial('id').primaryKey(),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    objectType: text('object_type').notNull(),
    objectId: integer('object_id').notNull(),
    format: text('format').notNull(),
    filters: jsonb('filters').notNull().default([]),
    parameters: jsonb('parameters').notNull().default({}),
    viewAsUserId: integer('view_as_user_id').references(() => users.id, { onDelete: 'cascade' }),
    state: text('state').notNull().default('queued'),
    progress: integer('progress').notNull().default(0),
    filePath: text('file_path'),
    fileName: text('file_name'),
    size: bigint('size', { mode: 'number' }),
    error: text('error'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    check('export_jobs_state_ck', sql`${t.state} in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
    check('export_jobs_format_ck', sql`${t.format} in ('csv', 'xlsx', 'pdf', 'png')`),
    index('export_jobs_owner_idx').on(t.ownerId),
    index('export_jobs_expires_idx').on(t.expiresAt),
  ],
);

/**
 * Render tokens of the internal render pages (/api/render/*): only the SHA-256 of the token is kept; a token is
 * bound to one export job and one object and lives minutes.
 */
export const exportRenderTokens = pgTable(
  'export_render_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    jobId: integer('job_id')
      .notNull()
      .references(() => exportJobs.id, { onDelete: 'cascade' }),
    objectType: text('object_type').notNull(),
    objectId: integer('object_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('export_render_tokens_job_idx').on(t.jobId)],
);
