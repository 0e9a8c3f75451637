import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, serial, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './users';
import { workspaces } from './workspaces';

/**
 * A dashboard: widgets of its own workspace laid out on tabs. `layout` holds the whole layout as the wire states it
 * (tabs, items, selectors, parameters): it is always saved whole (PUT /api/dashboard/{id}/schema), so one jsonb value
 * is read and written at once. `uuid` is the dashboard's stable code (pipelines and share links address it by it).
 */
export const dashboards = pgTable(
  'dashboards',
  {
    id: serial('id').primaryKey(),
    uuid: uuid('uuid')
      .notNull()
      .unique()
      .default(sql`gen_random_uuid()`),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    layout: jsonb('layout').notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('dashboards_workspace_idx').on(t.workspaceId), index('dashboards_author_idx').on(t.authorId)],
);
