import { sql } from 'drizzle-orm';
import {
  bigserial,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import { users } from './users';
import { workspaces } from './workspaces';

/** A deployment pipeline (POST /api/pipeline): a name and exactly three stages, created with it. */
export const pipelines = pgTable('pipelines', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  /** The author sees the pipeline and configures it freely while no stage is bound. */
  authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The stages 0 Разработка, 1 Тест, 2 Прод of a pipeline (names fixed, so not stored). `workspace_id` is the bound
 * shared workspace; one workspace is in at most one pipeline (unique, NULLs allowed). A bound workspace cannot be
 * deleted (its deletion guard answers first); `set null` is only the backstop.
 */
export const pipelineStages = pgTable(
  'pipeline_stages',
  {
    id: serial('id').primaryKey(),
    pipelineId: integer('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    order: smallint('order').notNull(),
    workspaceId: integer('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    boundBy: integer('bound_by').references(() => users.id, { onDelete: 'set null' }),
    boundAt: timestamp('bound_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('pipeline_stages_order_uq').on(t.pipelineId, t.order),
    uniqueIndex('pipeline_stages_workspace_uq').on(t.workspaceId),
    check('pipeline_stages_order_ck', sql`${t.order} between 0 and 2`),
  ],
);

/**
 * Which copy in stage `from_order + 1` was made from which original in stage `from_order` (the copy identity of
 * a pipeline stage pair). Objects of four kinds live in four tables, so there is no foreign key to them: deleting an
 * object, or unbinding either stage, removes its links. `original_updated_at` is the original's edit time as deployed:
 * the original is `changed` when it was edited after that (compare is by edit time, not by content).
 */
export const pipelineObjectLinks = pgTable(
  'pipeline_object_links',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pipelineId: integer('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    fromOrder: smallint('from_order').notNull(),
    objectType: text('object_type').notNull(),
    originalId: integer('original_id').notNull(),
    copyId: integer('copy_id').notNull(),
    originalUpdatedAt: timestamp('original_updated_at', { withTimezone: true }).notNull(),
    deployedAt: timestamp('deployed_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('pipeline_object_links_original_uq').on(t.pipelineId, t.fromOrder, t.objectType, t.originalId),
    uniqueIndex('pipeline_object_links_copy_uq').on(t.pipelineId, t.fromOrder, t.objectType, t.copyId),
    check('pipeline_object_links_from_ck', sql`${t.fromOrder} between 0 and 1`),
    check('pipeline_object_links_type_ck', sql`${t.objectType} in ('data_source', 'dataset', 'widget', 'dashboard')`),
  ],
);

/**
 * A data-source substitution rule of a receiving stage (1 or 2): the connection settings the copy of the source with
 * `source_uuid` gets at the next deploy into that stage. `settings` holds everything but secrets; `secrets` is the
 * same AES-256-GCM box as a source's, never returned.
 */
export const pipelineSourceRules = pgTable(
  'pipeline_source_rules',
  {
    id: serial('id').primaryKey(),
    pipelineId: integer('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    stageOrder: smallint('stage_order').notNull(),
    sourceUuid: uuid('source_uuid').notNull(),
    /** The source kind the settings are for (the source's type when the rule was saved). */
    type: text('type').notNull(),
    settings: jsonb('settings').notNull().default({}),
    secrets: text('secrets'),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('pipeline_source_rules_uq').on(t.pipelineId, t.stageOrder, t.sourceUuid),
    check('pipeline_source_rules_stage_ck', sql`${t.stageOrder} between 1 and 2`),
  ],
);

/**
 * Deployment history (beyond the reference: GET /api/pipeline/{id}/deployments): who deployed what from which stage,
 * per-object actions and warnings. Only successful deploys are recorded (a failed one changes nothing). A rollback
 * (POST /api/pipeline/{id}/deployments/{deploymentId}/rollback) is a deployment of its own: `kind` 'rollback',
 * `rolled_back_id` the deploy it undid (unique: a deploy is rolled back at most once), objects 'restored'/'deleted'.
 */
export const pipelineDeployments = pgTable(
  'pipeline_deployments',
  {
    id: serial('id').primaryKey(),
    pipelineId: integer('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    fromStage: smallint('from_stage').notNull(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'set null' }),
    /** [{type, source_id, target_id, action, name}] */
    objects: jsonb('objects').notNull().default([]),
    warnings: jsonb('warnings').notNull().default([]),
    /** deploy | rollback */
    kind: text('kind').notNull().default('deploy'),
    /** For a rollback: the deploy it undid. */
    rolledBackId: integer('rolled_back_id').references((): AnyPgColumn => pipelineDeployments.id, {
      onDelete: 'set null',
    }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('pipeline_deployments_pipeline_idx').on(t.pipelineId, t.createdAt),
    uniqueIndex('pipeline_deployments_rolled_back_uq').on(t.rolledBackId),
    check('pipeline_deployments_kind_ck', sql`${t.kind} in ('deploy', 'rollback')`),
  ],
);
