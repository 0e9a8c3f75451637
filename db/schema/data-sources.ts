import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { users } from './users';
import { workspaces } from './workspaces';

/**
 * A connection to a database or an uploaded file. `settings` holds everything but secrets; `secrets` is the
 * AES-256-GCM box of the secret fields (password, SSH key, passphrase, SSL key), never returned by any read.
 * `uuid` is the source's stable code (pipelines address substitution rules by it).
 */
export const dataSources = pgTable(
  'data_sources',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid')
      .notNull()
      .unique()
      .default(sql`gen_random_uuid()`),
    name: text('name').notNull(),
    type: text('type').notNull(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    settings: jsonb('settings').notNull().default({}),
    secrets: text('secrets'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('data_sources_workspace_idx').on(t.workspaceId), index('data_sources_type_idx').on(t.type)],
);

/** Schemas, tables and columns read from a source, kept until refreshed on request. */
export const dataSourceMetadata = pgTable(
  'data_source_metadata',
  {
    id: serial('id').primaryKey(),
    dataSourceId: integer('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    /** 'schemas' | 'tables:["<schema>"]' | 'columns:["<schema>","<table>"]' (JSON, so dots in names stay unambiguous) */
    cacheKey: text('cache_key').notNull(),
    value: jsonb('value').notNull(),
    fetchedAt: timestamp('fetched_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // Unique: two requests filling the same entry at once upsert one row.
  (t) => [uniqueIndex('data_source_metadata_key_uq').on(t.dataSourceId, t.cacheKey)],
);

/** SQL console queries: state, a bounded stored result for paging, and the history per source. */
export const dataSourceQueries = pgTable(
  'data_source_queries',
  {
    id: uuid('id')
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    dataSourceId: integer('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    sql: text('sql').notNull(),
    /** Positional values bound to $1 / ? placeholders. */
    parameters: jsonb('parameters').notNull().default([]),
    /** 'running' | 'finished' | 'failed' | 'cancelled' */
    state: text('state').notNull(),
    error: text('error'),
    columns: jsonb('columns'),
    rows: jsonb('rows'),
    rowCount: integer('row_count'),
    truncated: boolean('truncated').notNull().default(false),
    /**
     * Set by a cancel request on any API node; the node running the query polls it together with its heartbeat
     * and aborts the server-side query, so a cancel works whichever node it lands on.
     */
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    /** Refreshed by the running node every few hundred ms: a running query without a recent beat lost its node. */
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('data_source_queries_source_idx').on(t.dataSourceId, t.startedAt)],
);

/** Who used a source and how: read (metadata, preview, values), query (SQL console, widget data), edit. */
export const dataSourceAccessLog = pgTable(
  'data_source_access_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    dataSourceId: integer('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    action: text('action').notNull(),
    detail: text('detail').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('data_source_access_log_source_idx').on(t.dataSourceId, t.createdAt)],
);
