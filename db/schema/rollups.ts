import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
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
import { datasets } from './datasets';
import { users } from './users';

/**
 * Rollups of a dataset (GET/POST /api/dataset/{id}/rollups): small pre-aggregations kept beside its extract.
 * `dimensions` and `measures` hold server/rollups/types.ts RollupDimension[] / RollupMeasure[] (field ids, the
 * granularity, the aggregation and the columns of the built table). Refresh: with the dataset's extract runs
 * ('with_extract') or on its own cron + time zone ('schedule').
 */
export const datasetRollups = pgTable(
  'dataset_rollups',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    dimensions: jsonb('dimensions').notNull(),
    measures: jsonb('measures').notNull(),
    refreshMode: text('refresh_mode').notNull().default('with_extract'),
    cron: text('cron'),
    timezone: text('timezone').notNull().default('UTC'),
    enabled: boolean('enabled').notNull().default(true),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('dataset_rollups_name_idx').on(t.datasetId, t.name),
    check('dataset_rollups_refresh_ck', sql`${t.refreshMode} in ('with_extract', 'schedule')`),
  ],
);

/**
 * One build of a rollup, a run like an extract run (queued -> running -> succeeded | failed | cancelled). The partial
 * unique index: one queued or running build per rollup, whichever node asks.
 */
export const rollupBuilds = pgTable(
  'rollup_builds',
  {
    id: serial('id').primaryKey(),
    rollupId: integer('rollup_id')
      .notNull()
      .references(() => datasetRollups.id, { onDelete: 'cascade' }),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    state: text('state').notNull().default('queued'),
    /** manual, schedule (the rollup's own cron) or extract (after a successful extract run). */
    trigger: text('trigger').notNull().default('manual'),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    bossJobId: uuid('boss_job_id'),
    rows: bigint('rows', { mode: 'number' }),
    error: text('error'),
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('rollup_builds_rollup_idx').on(t.rollupId, t.id),
    uniqueIndex('rollup_builds_one_active_idx')
      .on(t.rollupId)
      .where(sql`${t.state} in ('queued', 'running')`),
    check('rollup_builds_state_ck', sql`${t.state} in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
  ],
);

/** The step and state log of a build. */
export const rollupBuildSteps = pgTable(
  'rollup_build_steps',
  {
    id: serial('id').primaryKey(),
    buildId: integer('build_id')
      .notNull()
      .references(() => rollupBuilds.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    state: text('state').notNull(),
    message: text('message').notNull(),
  },
  (t) => [index('rollup_build_steps_build_idx').on(t.buildId, t.id)],
);

/**
 * The built files of a rollup (rollups/dataset-<id>/rollup-<id>/<load id>.duckdb), immutable like extract loads. The
 * current load is the one row of its rollup without superseded_at; it becomes current in the transaction that marks
 * its build succeeded. `dataset_version` and `extract_load_id` say what data it was built from (freshness).
 */
export const rollupLoads = pgTable(
  'rollup_loads',
  {
    id: uuid('id').primaryKey(),
    rollupId: integer('rollup_id')
      .notNull()
      .references(() => datasetRollups.id, { onDelete: 'cascade' }),
    datasetId: integer('dataset_id').notNull(),
    buildId: integer('build_id').references(() => rollupBuilds.id, { onDelete: 'set null' }),
    datasetVersion: integer('dataset_version').notNull(),
    extractLoadId: uuid('extract_load_id'),
    rows: bigint('rows', { mode: 'number' }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    builtAt: timestamp('built_at', { withTimezone: true }).notNull().defaultNow(),
    supersededAt: timestamp('superseded_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('rollup_loads_current_idx')
      .on(t.rollupId)
      .where(sql`${t.supersededAt} is null`),
    index('rollup_loads_superseded_idx')
      .on(t.supersededAt)
      .where(sql`${t.supersededAt} is not null`),
  ],
);
