import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { dataSources } from './data-sources';
import { users } from './users';
import { workspaces } from './workspaces';

/**
 * A dataset: objects (tables or SQL queries of its sources), fields over them, relations, hierarchies, filters and
 * parameters. The schema tables keep their ids across saves (a save updates rows in place, inserts new ones and
 * deletes the omitted ones), so other areas (widgets, RLS and CLS rules) can refer to objects and fields by id.
 *
 * References between rows of one dataset that a single save may rewrite in any order (sort_by_field_id, derivation,
 * hierarchy levels, relation conditions) are checked by the schema validation, not by foreign keys; the remaining
 * foreign keys are NO ACTION, checked at the end of each statement, so the save can order its statements safely.
 */
export const datasets = pgTable(
  'datasets',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    /** true: queries run on the source; false: on the DuckDB extract (materialised). */
    live: boolean('live').notNull().default(true),
    /** Bumped by every save of the dataset (settings or schema): part of the engine's result cache key. */
    version: integer('version').notNull().default(1),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('datasets_workspace_idx').on(t.workspaceId), index('datasets_author_idx').on(t.authorId)],
);

/**
 * The sources a dataset is built on. A source listed here is not to be deleted: the data-source area checks this
 * table first. The foreign key cascades only so that deleting a whole workspace works whatever order PostgreSQL
 * runs its cascades in (a NO ACTION check on data_sources can fire before the datasets' own cascade has removed
 * these rows); a source that objects use still cannot go, because dataset_objects refers to these rows.
 */
export const datasetSources = pgTable(
  'dataset_sources',
  {
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    dataSourceId: integer('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'cascade' }),
    position: integer('position').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.datasetId, t.dataSourceId] }),
    index('dataset_sources_source_idx').on(t.dataSourceId),
  ],
);

/** A table (schema.table) or a read-only SELECT of one of the dataset's sources. */
export const datasetObjects = pgTable(
  'dataset_objects',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    dataSourceId: integer('data_source_id').notNull(),
    name: text('name').notNull(),
    kind: text('kind').notNull().default('table'),
    schema: text('schema'),
    table: text('table'),
    sql: text('sql'),
    position: integer('position').notNull().default(0),
  },
  (t) => [
    index('dataset_objects_dataset_idx').on(t.datasetId),
    // An object's source must be one of the dataset's sources.
    foreignKey({
      name: 'dataset_objects_dataset_source_fk',
      columns: [t.datasetId, t.dataSourceId],
      foreignColumns: [datasetSources.datasetId, datasetSources.dataSourceId],
    }),
    check('dataset_objects_kind_ck', sql`${t.kind} in ('table', 'sql')`),
  ],
);

/**
 * Physical fields (object_id + column), calculated ones (formula, object_id null) and derived ones (calculated,
 * with derivation; formula is built from it).
 */
export const datasetFields = pgTable(
  'dataset_fields',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    objectId: integer('object_id').references(() => datasetObjects.id),
    name: text('name').notNull(),
    title: text('title').notNull(),
    kind: text('kind').notNull(),
    column: text('column'),
    formula: text('formula'),
    /** { fieldId, function, args? } */
    derivation: jsonb('derivation'),
    primitiveType: text('primitive_type').notNull().default('unknown'),
    aggregation: text('aggregation').notNull().default('none'),
    hidden: boolean('hidden').notNull().default(false),
    description: text('description').notNull().default(''),
    sortByFieldId: integer('sort_by_field_id'),
    position: integer('position').notNull().default(0),
  },
  (t) => [
    index('dataset_fields_dataset_idx').on(t.datasetId),
    index('dataset_fields_object_idx').on(t.objectId),
    check('dataset_fields_kind_ck', sql`${t.kind} in ('physical', 'calculated')`),
    check('dataset_fields_shape_ck', sql`(${t.kind} = 'physical') = (${t.objectId} is not null)`),
  ],
);

export const datasetRelations = pgTable(
  'dataset_relations',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    leftObjectId: integer('left_object_id')
      .notNull()
      .references(() => datasetObjects.id),
    rightObjectId: integer('right_object_id')
      .notNull()
      .references(() => datasetObjects.id),
    joinType: text('join_type').notNull().default('left'),
    /** [{ leftFieldId, rightFieldId }] */
    conditions: jsonb('conditions').notNull().default([]),
    position: integer('position').notNull().default(0),
  },
  (t) => [index('dataset_relations_dataset_idx').on(t.datasetId)],
);

export const datasetHierarchies = pgTable(
  'dataset_hierarchies',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    fieldIds: integer('field_ids').array().notNull(),
    position: integer('position').notNull().default(0),
  },
  (t) => [index('dataset_hierarchies_dataset_idx').on(t.datasetId)],
);

/** Conditions applied to every query of the dataset. */
export const datasetFilters = pgTable(
  'dataset_filters',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    fieldId: integer('field_id')
      .notNull()
      .references(() => datasetFields.id),
    op: text('op').notNull(),
    values: jsonb('values').notNull().default([]),
    valueType: text('value_type').notNull().default('string'),
    position: integer('position').notNull().default(0),
  },
  (t) => [index('dataset_filters_dataset_idx').on(t.datasetId)],
);

export const datasetParameters = pgTable(
  'dataset_parameters',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** As sent (the specification uses `number`); the engine model maps it to its PrimitiveType. */
    primitiveType: text('primitive_type').notNull(),
    defaultValue: text('default_value').notNull().default(''),
    /** { kind: any | list | range, values? | min?, max?, step? } */
    domain: jsonb('domain').notNull().default({ kind: 'any' }),
    order: integer('order').notNull().default(0),
  },
  (t) => [index('dataset_parameters_dataset_idx').on(t.datasetId)],
);
