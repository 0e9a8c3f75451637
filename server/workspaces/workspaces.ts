import { and, count, eq, ilike, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { workspaceMembers, workspaces } from '../../db/schema/workspaces';
import { actorRoleRankSql, assertWorkspaceAdmin, assertWorkspaceReadable } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { AppError, ERROR_TABLE, badRequest } from '../kernel/errors';
import { containsPattern, orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { isForeignKeyViolation } from '../kernel/db-errors';
import { ADMIN_ROLE, roleOfRank } from '../access/roles';
import { deleteRightsInWorkspace } from '../access/object-rights-store';
import { endRunsOf, stopRunsAfter, type EndedRuns } from '../etl/etl';
import { stageBindingOf, workspaceDeletionBlocked } from './hooks';
import { insertWorkspace, updateWorkspace as updateWorkspaceRow } from './store';
import { lockWorkspace, workspaceView, type WorkspaceType, type WorkspaceView } from './views';

export const WORKSPACE_SORT_FIELDS = ['id', 'name', 'type', 'created_at', 'updated_at'] as const;

export interface WorkspaceListFilter {
  query?: string;
  type?: WorkspaceType;
  /** For a system administrator: only workspaces where they have a role (everyone else sees only those anyway). */
  memberOnly?: boolean;
}

export interface WorkspaceInput {
  name?: string;
  description?: string;
}

export async function listWorkspaces(db: DbOrTx, actor: Actor, input: PageRequest & WorkspaceListFilter) {
  const rank = actorRoleRankSql(actor, workspaces.id);
  const conditions: SQL[] = [];
  if (!actor.isSysadmin || input.memberOnly) conditions.push(sql`${rank} is not null`);
  if (input.type) conditions.push(eq(workspaces.type, input.type));
  if (input.query) conditions.push(ilike(workspaces.name, containsPattern(input.query)));
  const where = conditions.length ? and(...conditions) : undefined;

  const [{ total }] = await db.select({ total: count() }).from(workspaces).where(where);
  const rows = await db
    .select({ workspace: workspaces, rank })
    .from(workspaces)
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          id: workspaces.id,
          name: sql`lower(${workspaces.name})`,
          type: workspaces.type,
          created_at: workspaces.createdAt,
          updated_at: workspaces.updatedAt,
        },
        // The caller's own personal workspace first, then the rest by name.
        [sql`${workspaces.ownerUserId} = ${actor.userId} is not true`, sql`lower(${workspaces.name})`],
        workspaces.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  return pageOf(
    rows.map((r) => workspaceView(r.workspace, roleOfRank(r.rank))),
    input,
    total,
  );
}

export async function getWorkspace(deps: Pick<AppDeps, 'db' | 'caches'>, actor: Actor, id: number) {
  const { db } = deps;
  const { workspace, role } = await assertWorkspaceReadable(db, actor, id);
  const [{ members }] = await db
    .select({ members: count() })
    .from(workspaceMembers)
    .where(eq(workspaceMembers.workspaceId, id));
  return {
    ...workspaceView(workspace, role),
    member_count: members,
    pipeline_stage: await stageBindingOf(deps, db, id),
  };
}

/** Only members of «Менеджеры рабочих пространств» (checked by the router before the body); the creator administers it. */
export async function createWorkspace(
  deps: AppDeps,
  actor: Actor,
  input: Required<Pick<WorkspaceInput, 'name'>> & WorkspaceInput,
): Promise<WorkspaceView> {
  if (!actor.isWorkspaceManager) throw new AppError('forbidden');
  return deps.db.transaction(async (tx) => {
    const row = await insertWorkspace(
      tx,
      { name: input.name, description: input.description ?? '', type: 'shared', createdBy: actor.userId },
      actor.userId,
    );
    return workspaceView(row, ADMIN_ROLE);
  });
}

export async function updateWorkspace(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: WorkspaceInput,
): Promise<WorkspaceView> {
  return deps.db.transaction(async (tx) => {
    await lockWorkspace(tx, id);
    const { role } = await assertWorkspaceAdmin(tx, actor, id);
    const row = await updateWorkspaceRow(tx, id, {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.description !== undefined && { description: input.description }),
    });
    return workspaceView(row, role);
  });
}

/**
 * DELETE /api/workspaces/{id}: its objects go by cascade. Synchronisations of its datasets under way (a schedule keeps
 * starting them) go with them: their runs are deleted in the same transaction, their pulls and queries at the source
 * stopped once it commits, and the extract files removed.
 */
export async function deleteWorkspace(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  let ended: EndedRuns;
  try {
    ended = await deps.db
      .transaction(async (tx) => {
        await lockWorkspace(tx, id);
        const { workspace } = await assertWorkspaceAdmin(tx, actor, id);
        if (workspace.type === 'personal') throw badRequest('Личное пространство нельзя удалить');
        // The reason stays unsaid (specification): a bound pipeline stage, or whatever else an area registered.
        if (await workspaceDeletionBlocked(deps, tx, id)) throw badRequest(ERROR_TABLE.bad_request.message);
        // Its datasets locked, no run of theirs starts until this commits.
        const runs = await endRunsOf(tx, { workspaceId: id }, 'deleted');
        // Its objects go by cascade; their rights (no foreign key to an object) go here.
        await deleteRightsInWorkspace(tx, id);
        await tx.delete(workspaces).where(eq(workspaces.id, id));
        return runs;
      })
      .finally(() => readCachesChanged(deps)); // its members lose their reads
  } catch (e) {
    if (isForeignKeyViolation(e))
      throw badRequest('Пространство нельзя удалить, пока на его объекты ссылаются другие объекты');
    throw e;
  }
  await stopRunsAfter(deps, ended);
  return { id, deleted: true };
}
