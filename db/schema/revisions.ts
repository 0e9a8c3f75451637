import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { users } from './users';

/**
 * Revisions of workspace objects (server/revisions): every save of a data source, dataset, widget or dashboard, each
 * deploy copy, restore and rollback appends one, numbered 1, 2, ... per object, in the save's own transaction.
 * `snapshot` is the object's stored definition as rows of its tables ({ row, children? }, DB column names, without
 * edit times, the version or a source's secrets), so a restore writes it back exactly and keeps every id.
 * No foreign key to the object: a deleted object's revisions stay (a rollback reads them); `object_type` is the
 * kind's name (data_source, dataset, widget, dashboard).
 */
export const objectRevisions = pgTable(
  'object_revisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    objectType: text('object_type').notNull(),
    objectId: integer('object_id').notNull(),
    rev: integer('rev').notNull(),
    /** created | saved | schema_saved | deployed | restored | rolled_back */
    change: text('change').notNull(),
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    deploymentId: integer('deployment_id'),
    snapshot: jsonb('snapshot').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Listing one object's revisions newest first, the next number and pruning all read this index.
    uniqueIndex('object_revisions_object_rev_uq').on(t.objectType, t.objectId, t.rev),
    index('object_revisions_deployment_idx').on(t.deploymentId),
  ],
);
