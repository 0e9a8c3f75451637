import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { datasets } from './datasets';

/**
 * A column-level security rule of a dataset (server/access/dataset-security/column-rules.ts): for the users and groups
 * it names (both lists empty = everyone) the fields it lists are hidden (as if they did not exist) or masked (values
 * replaced).
 * Field ids are an array, so a schema save that would delete a field a rule names is refused by the schema store
 * rather than by a foreign key: silently dropping the rule would expose the field.
 */
export const datasetClsRules = pgTable(
  'dataset_cls_rules',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    fieldIds: integer('field_ids').array().notNull(),
    action: text('action').notNull(),
    userIds: integer('user_ids')
      .array()
      .notNull()
      .default(sql`'{}'::int[]`),
    groupIds: integer('group_ids')
      .array()
      .notNull()
      .default(sql`'{}'::int[]`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('dataset_cls_rules_dataset_idx').on(t.datasetId),
    check('dataset_cls_rules_action_ck', sql`${t.action} in ('hide', 'mask')`),
  ],
);
