import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { datasetFields, datasets } from './datasets';

/**
 * A row-level security rule of a dataset (server/access/dataset-security/row-rules.ts): for the users and groups it
 * names (both lists empty = everyone) rows pass only where the field's value is in (or equals) the user's attribute
 * `attribute`.
 * The field reference is deliberately not cascading: a schema save that would delete a field a rule uses is refused
 * (server/datasets/schema-store.ts), since silently dropping the rule would expose rows.
 */
export const datasetRlsRules = pgTable(
  'dataset_rls_rules',
  {
    id: serial('id').primaryKey(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id, { onDelete: 'cascade' }),
    fieldId: integer('field_id')
      .notNull()
      .references(() => datasetFields.id),
    attribute: text('attribute').notNull(),
    operator: text('operator').notNull(),
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
    index('dataset_rls_rules_dataset_idx').on(t.datasetId),
    index('dataset_rls_rules_field_idx').on(t.fieldId),
    check('dataset_rls_rules_operator_ck', sql`${t.operator} in ('in', 'eq')`),
  ],
);
