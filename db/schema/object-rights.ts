import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { groups } from './groups';
import { users } from './users';

/**
 * A right on one workspace object (server/objects/kinds.ts: data_source, dataset, widget, dashboard) for a user or a
 * group that need not be a member of its workspace: `view` lets them read the object, `edit` also change it
 * (server/access/object-access.ts). The object is named by kind and id (one table for every kind, so no foreign key
 * to it): its delete, and the delete of its workspace, remove its rights in the same transaction
 * (server/access/object-rights.ts). Rights are never carried by pipelines.
 */
export const objectRights = pgTable(
  'object_rights',
  {
    id: serial('id').primaryKey(),
    objectType: text('object_type').notNull(),
    objectId: integer('object_id').notNull(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    groupId: integer('group_id').references(() => groups.id, { onDelete: 'cascade' }),
    right: text('right').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('object_rights_user_uq').on(t.objectType, t.objectId, t.userId),
    uniqueIndex('object_rights_group_uq').on(t.objectType, t.objectId, t.groupId),
    index('object_rights_user_idx').on(t.userId),
    index('object_rights_group_idx').on(t.groupId),
    check('object_rights_subject_ck', sql`(${t.userId} is null) <> (${t.groupId} is null)`),
    check('object_rights_right_ck', sql`${t.right} in ('view', 'edit')`),
  ],
);
