import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { groups } from './groups';
import { users } from './users';

/** Personal (one per user) and shared («Общее») workspaces. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    type: text('type').notNull(),
    ownerUserId: integer('owner_user_id').references(() => users.id, { onDelete: 'cascade' }),
    createdBy: integer('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('workspaces_personal_owner_uq').on(t.ownerUserId),
    check('workspaces_type_ck', sql`${t.type} in ('personal', 'shared')`),
  ],
);

/** A member is either a user or a group, with one role in the workspace. */
export const workspaceMembers = pgTable(
  'workspace_members',
  {
    id: serial('id').primaryKey(),
    workspaceId: integer('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    groupId: integer('group_id').references(() => groups.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('workspace_members_user_uq').on(t.workspaceId, t.userId),
    uniqueIndex('workspace_members_group_uq').on(t.workspaceId, t.groupId),
    index('workspace_members_user_idx').on(t.userId),
    index('workspace_members_group_idx').on(t.groupId),
    check('workspace_members_subject_ck', sql`(${t.userId} is null) <> (${t.groupId} is null)`),
  ],
);
