import type { DbOrTx, Tx } from '../../db/client';
import type { Actor } from '../auth/actor';
import { ADMIN_ROLE, roleIsAdmin } from '../access/roles';
import { assertWorkspaceReadable } from '../access/workspace-access';
import type { AppDeps } from '../app/deps';
import { isUniqueViolation } from '../kernel/db-errors';
import { AppError, badRequest } from '../kernel/errors';
import { pipelineForCaller, requirePipelineAdmin, stageAt } from './access';
import { MSG, stageNotBound } from './messages';
import { eraseStageLinks, setStageWorkspace, stageOfWorkspace, boundWorkspaceIds, updatePipelineRow } from './store';
import { STAGE_NAMES } from './stages';
import { boundStageView, type StageView } from './views';
import { sharedWorkspacesAdministeredBy } from '../workspaces/store';
import { lockWorkspace } from '../workspaces/views';

/*
 * Binding stages to workspaces: PUT/DELETE /api/pipeline/{id}/stage/{order}, GET /api/pipeline/{id}/available-workspaces,
 * and what the workspaces area asks of pipelines (a bound workspace cannot be deleted; which stage it is bound to).
 *
 * Locks: the pipeline row, then the workspace row, both `for update`. DELETE /api/workspaces/{id} locks the same
 * workspace row before its deletion guard runs, so a bind and a deletion of one workspace never interleave; two binds
 * of one workspace into two pipelines queue on the workspace row, and the unique index on pipeline_stages.workspace_id
 * is the backstop that turns into the same 400.
 */

const WORKSPACE_UNIQUE = 'pipeline_stages_workspace_uq';

/** PUT /api/pipeline/{id}/stage/{order}: bind the stage, or change its workspace. */
export async function bindStage(
  deps: AppDeps,
  actor: Actor,
  id: number,
  order: number,
  workspaceId: number,
): Promise<StageView> {
  try {
    return await deps.db.transaction(async (tx) => {
      const ctx = await pipelineForCaller(tx, actor, id, { lock: true });
      const stage = stageAt(ctx, order);
      requirePipelineAdmin(ctx);
      const workspace = await lockBindableWorkspace(tx, actor, workspaceId);
      if (stage.workspaceId === workspaceId) return boundStageView(stage, workspace.name, ADMIN_ROLE);
      const taken = await stageOfWorkspace(tx, workspaceId);
      if (taken) throw badRequest(taken.stage.pipelineId === id ? MSG.sameWorkspaceTwice : MSG.workspaceTaken);
      // A changed workspace: the copies of the old one no longer match anything in the new one.
      if (stage.workspaceId !== null) await eraseStageLinks(tx, id, order);
      const bound = await setStageWorkspace(tx, stage.id, workspaceId, actor.userId);
      await updatePipelineRow(tx, id, {});
      return boundStageView(bound, workspace.name, ADMIN_ROLE);
    });
  } catch (e) {
    if (isUniqueViolation(e, WORKSPACE_UNIQUE)) throw badRequest(MSG.workspaceTaken);
    throw e;
  }
}

/**
 * The workspace, locked: it must exist and be readable (else 404), be shared (else 400 «К стадии можно привязать
 * только командное пространство») and the caller must be its Администратор (else 403).
 */
async function lockBindableWorkspace(tx: Tx, actor: Actor, workspaceId: number) {
  await lockWorkspace(tx, workspaceId);
  const { workspace, role } = await assertWorkspaceReadable(tx, actor, workspaceId);
  if (workspace.type !== 'shared') throw badRequest(MSG.sharedOnly);
  if (!roleIsAdmin(role)) throw new AppError('forbidden');
  return workspace;
}

/**
 * DELETE /api/pipeline/{id}/stage/{order}: unbind. The copy links of both stage pairs touching the stage are erased
 * (originals become new, copies target_only); objects and substitution rules stay. Binding the same workspace again
 * does not bring the links back: the next deploy creates second instances.
 */
export async function unbindStage(deps: AppDeps, actor: Actor, id: number, order: number): Promise<StageView> {
  return deps.db.transaction(async (tx) => {
    const ctx = await pipelineForCaller(tx, actor, id, { lock: true });
    const stage = stageAt(ctx, order);
    requirePipelineAdmin(ctx);
    if (stage.workspaceId === null) throw stageNotBound(order);
    await eraseStageLinks(tx, id, order);
    const unbound = await setStageWorkspace(tx, stage.id, null, null);
    await updatePipelineRow(tx, id, {});
    return boundStageView(unbound, null, null);
  });
}

export interface AvailableWorkspaces {
  content: { id: number; name: string; description: string }[];
  /** «Нет свободного командного пространства, где вы администратор» when content is empty, else null. */
  message: string | null;
}

/**
 * GET /api/pipeline/{id}/available-workspaces: shared workspaces where the caller is Администратор (directly or by
 * group) and that no stage of any pipeline holds. An empty answer is not an error: it carries the message.
 */
export async function availableWorkspaces(deps: AppDeps, actor: Actor, id: number): Promise<AvailableWorkspaces> {
  await pipelineForCaller(deps.db, actor, id);
  const administered = await sharedWorkspacesAdministeredBy(deps.db, actor.userId, actor.groupIds);
  const bound = await boundWorkspaceIds(
    deps.db,
    administered.map((w) => w.id),
  );
  const rows = administered.filter((w) => !bound.has(w.id));
  return { content: rows, message: rows.length === 0 ? MSG.noFreeWorkspace : null };
}

/** Deletion guard of DELETE /api/workspaces/{id}: a workspace bound to a stage cannot be deleted. */
export async function workspaceBoundToStage(tx: Tx, workspaceId: number): Promise<boolean> {
  return (await stageOfWorkspace(tx, workspaceId)) !== undefined;
}

/** pipeline_stage of GET /api/workspaces/{id}. */
export async function workspaceStageBinding(db: DbOrTx, workspaceId: number) {
  const found = await stageOfWorkspace(db, workspaceId);
  if (!found) return null;
  const { stage, pipelineName } = found;
  return {
    pipeline_id: stage.pipelineId,
    pipeline_name: pipelineName,
    order: stage.order,
    name: STAGE_NAMES[stage.order],
  };
}
