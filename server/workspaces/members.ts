import { and, count, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { workspaceMembers } from '../../db/schema/workspaces';
import { assertWorkspaceReadable, type WorkspaceAccess } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { AppError, badRequest, invalid, notFound } from '../kernel/errors';
import { orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { isForeignKeyViolation, isUniqueViolation } from '../kernel/db-errors';
import { ADMIN_ROLE, WORKSPACE_ROLES, roleIsAdmin, roleRank, type WorkspaceRole } from '../access/roles';
import { existingGroupIds } from '../groups/store';
import { groupRef } from '../groups/views';
import { existingUserIds } from '../users/store';
import { userRef } from '../users/views';
import { lockWorkspace } from './views';

export const MEMBER_SORT_FIELDS = ['member_id', 'name', 'role', 'created_at'] as const;

export type NewMember = { role: WorkspaceRole } & (
  { user_id: number; group_id?: undefined } | { group_id: number; user_id?: undefined }
);

// The member's account or group, joined from what the users and groups areas offer (one query per page).
const users = userRef();
const groups = groupRef();
const memberName = sql<string>`coalesce(${users.username}, ${groups.name})`;
const roleRankSql = sql<number>`case ${workspaceMembers.role} ${sql.join(
  WORKSPACE_ROLES.map((r) => sql`when ${r} then ${sql.raw(String(roleRank(r)))}`),
  sql` `,
)} end`;

function memberQuery(db: DbOrTx) {
  return db
    .select({
      id: workspaceMembers.id,
      userId: workspaceMembers.userId,
      groupId: workspaceMembers.groupId,
      role: workspaceMembers.role,
      createdAt: workspaceMembers.createdAt,
      name: memberName,
      fullName: users.fullName,
    })
    .from(workspaceMembers)
    .leftJoin(users, eq(users.id, workspaceMembers.userId))
    .leftJoin(groups, eq(groups.id, workspaceMembers.groupId));
}

type MemberRow = Awaited<ReturnType<ReturnType<typeof memberQuery>['execute']>>[number];

const memberView = (m: MemberRow) => ({
  member_id: m.id,
  user_id: m.userId,
  group_id: m.groupId,
  subject_type: (m.userId !== null ? 'user' : 'group') as 'user' | 'group',
  name: m.name,
  full_name: m.userId !== null ? m.fullName : null,
  role: m.role as WorkspaceRole,
  created_at: m.createdAt.toISOString(),
});

const memberNotFound = (id: number) => notFound(`Участник пространства не найден (id ${id})`);

/**
 * Workspace Администратор manages members. A system administrator may too, even without a role: it is the way back
 * into a workspace whose administrators have all left (accounts deleted). It does not give them any other right there.
 */
async function assertCanManageMembers(tx: DbOrTx, actor: Actor, workspaceId: number): Promise<WorkspaceAccess> {
  const access = await assertWorkspaceReadable(tx, actor, workspaceId);
  if (!roleIsAdmin(access.role) && !actor.isSysadmin) throw new AppError('forbidden');
  return access;
}

async function findMemberOr404(tx: DbOrTx, workspaceId: number, memberId: number): Promise<MemberRow> {
  const [m] = await memberQuery(tx).where(
    and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.id, memberId)),
  );
  if (!m) throw memberNotFound(memberId);
  return m;
}

/** Refuses to leave the workspace without an Администратор (a group with that role counts as one). */
async function assertNotLastAdmin(tx: DbOrTx, workspaceId: number, member: MemberRow, message: string): Promise<void> {
  if (member.role !== ADMIN_ROLE) return;
  const [{ n }] = await tx
    .select({ n: count() })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, ADMIN_ROLE)));
  if (n <= 1) throw badRequest(message);
}

export async function listMembers(db: DbOrTx, actor: Actor, workspaceId: number, input: PageRequest) {
  await assertWorkspaceReadable(db, actor, workspaceId);
  const where = eq(workspaceMembers.workspaceId, workspaceId);
  const [{ total }] = await db.select({ total: count() }).from(workspaceMembers).where(where);
  const rows = await memberQuery(db)
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          member_id: workspaceMembers.id,
          name: sql`lower(${memberName})`,
          role: roleRankSql,
          created_at: workspaceMembers.createdAt,
        },
        [sql`${roleRankSql} desc`, sql`lower(${memberName})`],
        workspaceMembers.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(rows.map(memberView), input, total);
}

export async function addMember(deps: AppDeps, actor: Actor, workspaceId: number, input: NewMember) {
  const isUser = input.user_id !== undefined;
  const duplicate = () =>
    badRequest(
      isUser ? 'Пользователь уже является участником пространства' : 'Группа уже является участником пространства',
    );
  try {
    return await deps.db
      .transaction(async (tx) => {
        await lockWorkspace(tx, workspaceId);
        const { workspace } = await assertCanManageMembers(tx, actor, workspaceId);
        // A personal workspace is its owner's alone; sharing happens in shared workspaces (or by object rights).
        if (workspace.type === 'personal') throw badRequest('В личное пространство нельзя добавлять участников');
        const subject = isUser
          ? await existingUserIds(tx, [input.user_id!])
          : await existingGroupIds(tx, [input.group_id!]);
        if (subject.size === 0) {
          throw invalid(
            isUser
              ? { userId: `Пользователь не найден (id ${input.user_id})` }
              : { groupId: `Группа не найдена (id ${input.group_id})` },
          );
        }
        const same = isUser
          ? eq(workspaceMembers.userId, input.user_id!)
          : eq(workspaceMembers.groupId, input.group_id!);
        const [existing] = await tx
          .select({ id: workspaceMembers.id })
          .from(workspaceMembers)
          .where(and(eq(workspaceMembers.workspaceId, workspaceId), same));
        if (existing) throw duplicate();
        const [row] = await tx
          .insert(workspaceMembers)
          .values({ workspaceId, userId: input.user_id ?? null, groupId: input.group_id ?? null, role: input.role })
          .returning({ id: workspaceMembers.id });
        return memberView(await findMemberOr404(tx, workspaceId, row.id));
      })
      .finally(() => readCachesChanged(deps)); // who reads what may have changed: cached read decisions go
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicate();
    // The user or group was deleted between our check and the insert.
    if (isForeignKeyViolation(e))
      throw invalid(isUser ? { userId: 'Пользователь не найден' } : { groupId: 'Группа не найдена' });
    throw e;
  }
}

export async function updateMember(
  deps: AppDeps,
  actor: Actor,
  workspaceId: number,
  memberId: number,
  role: WorkspaceRole,
) {
  return deps.db
    .transaction(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      await assertCanManageMembers(tx, actor, workspaceId);
      const member = await findMemberOr404(tx, workspaceId, memberId);
      if (role !== ADMIN_ROLE) {
        await assertNotLastAdmin(
          tx,
          workspaceId,
          member,
          'Нельзя понизить роль последнего администратора: в пространстве должен остаться хотя бы один Администратор',
        );
      }
      await tx.update(workspaceMembers).set({ role }).where(eq(workspaceMembers.id, memberId));
      return memberView({ ...member, role });
    })
    .finally(() => readCachesChanged(deps));
}

export async function removeMember(deps: AppDeps, actor: Actor, workspaceId: number, memberId: number) {
  return deps.db
    .transaction(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      await assertCanManageMembers(tx, actor, workspaceId);
      const member = await findMemberOr404(tx, workspaceId, memberId);
      await assertNotLastAdmin(
        tx,
        workspaceId,
        member,
        'Нельзя удалить последнего администратора: в пространстве должен остаться хотя бы один Администратор',
      );
      await tx.delete(workspaceMembers).where(eq(workspaceMembers.id, memberId));
      return { member_id: memberId, removed: true as const };
    })
    .finally(() => readCachesChanged(deps));
}
