import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { dashboards } from './dashboards';
import { mailChannels } from './mail-channels';
import { users } from './users';
import { workspaces } from './workspaces';

/**
 * A mailing (/api/mailings): a dashboard or widgets in a format, to recipients, on a cron schedule. The channel is
 * referenced with ON DELETE RESTRICT: a channel in use cannot go (the service answers 400 before the database would).
 */
export const mailings = pgTable(
  'mailings',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** The owner: letters are built with this user's rights, row and column rules (docs/mailings.md). */
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    dashboardId: integer('dashboard_id').references(() => dashboards.id, { onDelete: 'set null' }),
    widgetIds: jsonb('widget_ids').$type<number[]>().notNull().default([]),
    format: text('format').notNull(),
    schedule: text('schedule'),
    timezone: text('timezone').notNull().default('UTC'),
    status: text('status').notNull().default('active'),
    channelId: integer('channel_id')
      .notNull()
      .references(() => mailChannels.id, { onDelete: 'restrict' }),
    recipients: jsonb('recipients')
      .$type<{ user_ids: number[]; group_ids: number[]; emails: string[] }>()
      .notNull()
      .default({ user_ids: [], group_ids: [], emails: [] }),
    subject: text('subject').notNull().default(''),
    body: text('body').notNull().default(''),
    slice: jsonb('slice').$type<{ dataset_id: number; field_id: number; recipient_field_id: number } | null>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('mailings_workspace_idx').on(t.workspaceId),
    index('mailings_channel_idx').on(t.channelId),
    check('mailings_status_ck', sql`${t.status} in ('active', 'paused')`),
    check('mailings_format_ck', sql`${t.format} in ('pdf', 'png', 'xlsx', 'csv', 'inline')`),
  ],
);

/** One run of a mailing (/api/mailings/{id}/runs): its letters are planned first, then sent one by one. */
export const mailingRuns = pgTable(
  'mailing_runs',
  {
    id: serial('id').primaryKey(),
    mailingId: integer('mailing_id')
      .notNull()
      .references(() => mailings.id, { onDelete: 'cascade' }),
    state: text('state').notNull().default('queued'),
    trigger: text('trigger').notNull().default('manual'),
    lettersSent: integer('letters_sent').notNull().default(0),
    lettersFailed: integer('letters_failed').notNull().default(0),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('mailing_runs_mailing_idx').on(t.mailingId, t.id),
    check('mailing_runs_state_ck', sql`${t.state} in ('queued', 'running', 'succeeded', 'failed')`),
  ],
);

/**
 * One letter of a run: planned (pending) before anything is sent, marked `sending` just before the SMTP call and
 * `sent` after it. The unique key (run, recipient, slice value) means a resumed run never plans a letter twice; a
 * letter found `sending` when the run is resumed on another node (its node died mid-call) is never sent again: it
 * may or may not have left, so it becomes `unconfirmed`, and the run's report names its recipient.
 */
export const mailingLetters = pgTable(
  'mailing_letters',
  {
    id: serial('id').primaryKey(),
    runId: integer('run_id')
      .notNull()
      .references(() => mailingRuns.id, { onDelete: 'cascade' }),
    recipient: text('recipient').notNull(),
    /** The slice value as text ('' for a mailing without a slice). */
    sliceValue: text('slice_value').notNull().default(''),
    status: text('status').notNull().default('pending'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    sentAt: timestamp('sent_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('mailing_letters_key_idx').on(t.runId, t.recipient, t.sliceValue),
    check('mailing_letters_status_ck', sql`${t.status} in ('pending', 'sending', 'sent', 'failed', 'unconfirmed')`),
  ],
);
