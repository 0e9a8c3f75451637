import { and, asc, count, eq, exists, getTableName, sql, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { groupMembers, groups } from '../../db/schema/groups';
import { notFound } from '../kernel/errors';
import { orderByOf, pageOf, type PageRequest } from '../kernel/paging';

export type GroupRow = typeof groups.$inferSelect;

/** A group as a user's record names it. */
export interface GroupRef {
  id: number;
  name: string;
  system: boolean;
}

/**
 * What other areas may join of a group (a workspace's members list sorts by member name): its id and name, as a
 * subquery PostgreSQL inlines, so the list stays one query.
 */
export const groupRef = (alias = 'group_ref') =>
  new QueryBuilder().select({ id: groups.id, name: groups.name }).from(groups).as(alias);

/** SQL: the account `userId` (a column of the caller's query) is a member of the group. */
export function isGroupMemberSql(groupId: number, userId: SQLWrapper) {
  return exists(
    new QueryBuilder()
      .select({ one: sql`1` })
      .from(groupMembers)
      .where(and(eq(groupMembers.groupId, groupId), sql`${groupMembers.userId} = ${userId}`)),
  );
}

const groupNotFound = (id: number) => notFound(`Группа не найдена (id ${id})`);

/**
 * Member count as a correlated subquery: one round trip for a whole page of groups. Names are qualified by hand:
 * drizzle leaves them bare in the select list of a one-table query.
 */
export const memberCountSql = sql<number>`(select count(*)::int from ${groupMembers} as "gm_count"
  where "gm_count"."group_id" = ${sql.identifier(getTableName(groups))}."id")`;

export function groupView(g: GroupRow, memberCount: number) {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    // System groups (platform administrators, «Менеджеры рабочих пространств») grant platform rights.
    system: g.systemKey !== null,
    system_key: g.systemKey,
    member_count: memberCount,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}
export type GroupView = ReturnType<typeof groupView>;

export async function findGroupOr404(db: DbOrTx, id: number, opts: { forUpdate?: boolean } = {}): Promise<GroupRow> {
  const query = db.select().from(groups).where(eq(groups.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  if (!row) throw groupNotFound(id);
  return row;
}

export async function groupViewById(db: DbOrTx, id: number): Promise<GroupView> {
  const [row] = await db.select({ group: groups, members: memberCountSql }).from(groups).where(eq(groups.id, id));
  if (!row) throw groupNotFound(id);
  return groupView(row.group, row.members);
}

/** GET /api/users/{id}/groups: a page of the user's groups with the time each membership began. */
export async function groupsOfUserPage(db: DbOrTx, userId: number, input: PageRequest) {
  const where = eq(groupMembers.userId, userId);
  const [{ total }] = await db.select({ total: count() }).from(groupMembers).where(where);
  const rows = await db
    .select({
      id: groups.id,
      name: groups.name,
      description: groups.description,
      systemKey: groups.systemKey,
      addedAt: groupMembers.createdAt,
    })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        { id: groups.id, name: groups.name, added_at: groupMembers.createdAt },
        [asc(groups.name)],
        groups.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  const content = rows.map((g): GroupRef & { description: string; added_at: string } => ({
    id: g.id,
    name: g.name,
    description: g.description,
    system: g.systemKey !== null,
    added_at: g.addedAt.toISOString(),
  }));
  return pageOf(content, input, total);
}
