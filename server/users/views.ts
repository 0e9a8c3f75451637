import { and, asc, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { groupMembers, groups } from '../../db/schema/groups';
import { users } from '../../db/schema/users';
import { workspaces } from '../../db/schema/workspaces';
import { notFound } from '../kernel/errors';
import type { AccountType } from './accounts';

export type UserRow = typeof users.$inferSelect;

export interface GroupRef {
  id: number;
  name: string;
  system: boolean;
}

/** What any user may see of another account: enough to pick someone, nothing to contact or profile them. */
export interface UserSummary {
  id: number;
  username: string;
  full_name: string;
}

/** The whole account, for system administrators (and for the user themself). */
export interface UserRecord extends UserSummary {
  email: string | null;
  account_type: AccountType;
  active: boolean;
  must_change_password: boolean;
  groups: GroupRef[];
  personal_workspace_id: number | null;
  created_at: string;
  updated_at: string;
}

const userNotFound = (id: number) => notFound(`Пользователь не найден (id ${id})`);

export const userSummary = (u: UserRow): UserSummary => ({ id: u.id, username: u.username, full_name: u.fullName });

/** Full records for a page of users: their groups and personal workspaces in two queries, not two per user. */
export async function userRecords(db: DbOrTx, rows: UserRow[]): Promise<UserRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const memberships = await db
    .select({ userId: groupMembers.userId, id: groups.id, name: groups.name, systemKey: groups.systemKey })
    .from(groupMembers)
    .innerJoin(groups, eq(groups.id, groupMembers.groupId))
    .where(inArray(groupMembers.userId, ids))
    .orderBy(asc(groups.name), asc(groups.id));
  const personal = await db
    .select({ ownerUserId: workspaces.ownerUserId, id: workspaces.id })
    .from(workspaces)
    .where(and(inArray(workspaces.ownerUserId, ids), eq(workspaces.type, 'personal')));
  const groupsOf = new Map<number, GroupRef[]>();
  for (const m of memberships) {
    const list = groupsOf.get(m.userId) ?? [];
    list.push({ id: m.id, name: m.name, system: m.systemKey !== null });
    groupsOf.set(m.userId, list);
  }
  const personalOf = new Map(personal.map((p) => [p.ownerUserId, p.id]));
  return rows.map((u) => ({
    ...userSummary(u),
    email: u.email,
    account_type: u.accountType as AccountType,
    active: u.active,
    must_change_password: u.mustChangePassword,
    groups: groupsOf.get(u.id) ?? [],
    personal_workspace_id: personalOf.get(u.id) ?? null,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  }));
}

export async function userRecord(db: DbOrTx, row: UserRow): Promise<UserRecord> {
  const [record] = await userRecords(db, [row]);
  return record;
}

/** The account row, locked for the rest of the transaction when asked (so two admins' changes do not interleave). */
export async function findUserOr404(db: DbOrTx, id: number, opts: { forUpdate?: boolean } = {}): Promise<UserRow> {
  const query = db.select().from(users).where(eq(users.id, id));
  const [row] = opts.forUpdate ? await query.for('update') : await query;
  if (!row) throw userNotFound(id);
  return row;
}
