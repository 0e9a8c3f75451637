import { index, integer, jsonb, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { datasets } from './datasets';
import { users } from './users';
import { workspaces } from './workspaces';

/**
 * A widget: a visualisation of one dataset. `config` holds the shelves and their companions as the wire states them
 * (rows, series, columns, filters, sorts, calculated_fields); the query engine compiles it on every data request.
 * The widget lives in its dataset's workspace. A dataset with widgets cannot be deleted (NO ACTION).
 */
export const widgets = pgTable(
  'widgets',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    datasetId: integer('dataset_id')
      .notNull()
      .references(() => datasets.id),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    config: jsonb('config').notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('widgets_workspace_idx').on(t.workspaceId),
    index('widgets_dataset_idx').on(t.datasetId),
    index('widgets_author_idx').on(t.authorId),
  ],
);
