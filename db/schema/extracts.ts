import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { datasetFields, datasets } from './datasets';
import { users } from './users';

/**
 * Extraction settings of a materialised dataset (GET/PUT /api/dataset/{id}/extraction). Kept in a table of their own:
 * a pipeline deploy copies datasets, never these rows (the specification: the refresh schedule is not carried).
 * No row = defaults (full mode, no schedule).
 */
export const datasetExtractions = pgTable(
  'dataset_extractions',
  {
    datasetId: integer('dataset_id')
      .primaryKey()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    mode: text('mode').notNull().default('full'),
    /** Incremental mode: rows whose value of this field is above the extract's maximum are added. */
    incrementalFieldId: integer('incremental_field_id').references(() => datasetFields.id, { onDelete: 'set null' }),
    /** Cron expression (5 fields) or null: no scheduled runs. */
    schedule: text('schedule'),
    timezone: text('timezone').notNull().default('UTC'),
    enabled: boolean('enabled').notNull().default(false),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check('dataset_extractions_mode_ck', sql`${t.mode} in ('full', 'incremental')`)],
);

/**
 * One synchronisation run (an ETL job: /api/datasets/{id}/extracts, /api/etl-jobs/{jobId}). The partial unique index
 * is the one-run-per-dataset guarantee across API nodes: a second queued or running run of a dataset cannot exist.
 */
export const extractRuns = pgTable(
  'extract_runs',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    mode: text('mode').notNull(),
    state: text('state').notNull().default('queued'),
    /** Who started it; null for a scheduled run (its notification goes to the dataset's author). */
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    trigger: text('trigger').notNull().default('manual'),
    /** The pg-boss job carrying the run. */
    bossJobId: uuid('boss_job_id'),
    rowsLoaded: bigint('rows_loaded', { mode: 'number' }).notNull().default(0),
    /** Rows the source reported before the pull (tables only): progress is rows_loaded / rows_total. */
    rowsTotal: bigint('rows_total', { mode: 'number' }),
    error: text('error'),
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    /** Written with the progress while the run pulls: a running run without a recent heartbeat lost its worker. */
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('extract_runs_dataset_idx').on(t.datasetId, t.id),
    uniqueIndex('extract_runs_one_active_idx')
      .on(t.datasetId)
      .where(sql`${t.state} in ('queued', 'running')`),
    check('extract_runs_state_ck', sql`${t.state} in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
    check('extract_runs_mode_ck', sql`${t.mode} in ('full', 'incremental')`),
  ],
);

/** The step and state log of a run (GET /api/etl-jobs/{jobId}/history). */
export const extractRunSteps = pgTable(
  'extract_run_steps',
  {
    id: serial('id').primaryKey(),
    runId: integer('run_id')
      .notNull()
      .references(() => extractRuns.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    state: text('state').notNull(),
    message: text('message').notNull(),
  },
  (t) => [index('extract_run_steps_run_idx').on(t.runId, t.id)],
);

/**
 * The loads of a dataset's extract: each complete run's DuckDB file, stored once under its own key
 * (extracts/dataset-<id>/<load id>.duckdb, server/etl/loads.ts) and never rewritten. The current load is the one
 * row of its dataset without superseded_at (the partial unique index); it becomes current in the transaction that
 * marks its run succeeded, and every node opens that key. A superseded load is kept for a grace period (readers on
 * other nodes may still be opening it) and then deleted, object and row, by the sweep of a worker node.
 */
export const extractLoads = pgTable(
  'extract_loads',
  {
    /** The load id: a new uuid per successful pull, never reused (a retried run uploads under a new one). */
    id: uuid('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    /** The run that loaded it; null for a legacy file of an older version moved into storage, or a pruned run. */
    runId: integer('run_id').references(() => extractRuns.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** When a newer load replaced it: its object goes once the grace period has passed. */
    supersededAt: timestamp('superseded_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('extract_loads_current_idx')
      .on(t.datasetId)
      .where(sql`${t.supersededAt} is null`),
    index('extract_loads_superseded_idx')
      .on(t.supersededAt)
      .where(sql`${t.supersededAt} is not null`),
  ],
);
