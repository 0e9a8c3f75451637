import { eq, getTableName, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groupMembers, groups } from '../../db/schema/groups';
import { notFound } from '../kernel/errors';

export type GroupRow = typeof groups.$inferSelect;

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
