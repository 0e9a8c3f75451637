import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineStages, pipelines } from '../../db/schema/pipelines';
import type { Actor } from '../auth/actor';
import { actorRoleRankSql } from '../access/workspace-access';
import { roleIsAdmin, roleOfRank, type WorkspaceRole } from '../access/roles';
import { AppError } from '../kernel/errors';
import { pipelineNotFound, stageNotBound, stageNotFound } from './messages';
import { isStageOrder } from './stages';

/*
 * Who may do what with a pipeline (spec, Authentication point 6):
 * - see it: any role in any bound stage, or being its author;
 * - rename, delete, bind or unbind a stage: Администратор in ALL bound stages; while none is bound, the author freely;
 * - edit the substitution rules of a stage: Администратор in that stage;
 * - deploy: Администратор in the receiving stage and any role in the source stage.
 * A pipeline the caller may not see does not exist for them (404, never 403, so ids do not leak); a visible one with a
 * role lacking answers 403 «Доступ запрещён». A system administrator has no implicit role here, as in workspaces.
 */

export type PipelineRow = typeof pipelines.$inferSelect;
export type PipelineStageRow = typeof pipelineStages.$inferSelect;

export interface PipelineContext {
  pipeline: PipelineRow;
  /** The three stages; index = order. */
  stages: PipelineStageRow[];
  /** The caller's strongest role (direct or by group) per stage; null = unbound stage or no role there. */
  roles: (WorkspaceRole | null)[];
  /** The caller is the pipeline's author (free to configure it while no stage is bound). */
  isAuthor: boolean;
}

/**
 * The pipeline with its stages and the caller's roles, in one statement per table; 404 «Пайплайн не найден (id N)»
 * when it does not exist or the caller may not see it. With `lock`, the pipeline row is locked `for update` until the
 * transaction ends, so that binds, unbinds, deletes and deploys of one pipeline run one after another.
 */
export async function pipelineForCaller(
  tx: DbOrTx,
  actor: Actor,
  id: number,
  opts: { lock?: boolean } = {},
): Promise<PipelineContext> {
  const query = tx.select().from(pipelines).where(eq(pipelines.id, id));
  const [pipeline] = opts.lock ? await query.for('update') : await query;
  if (!pipeline) throw pipelineNotFound(id);
  const rows = await tx
    .select({ stage: pipelineStages, rank: actorRoleRankSql(actor, pipelineStages.workspaceId) })
    .from(pipelineStages)
    .where(eq(pipelineStages.pipelineId, id))
    .orderBy(asc(pipelineStages.order));
  const stages = rows.map((r) => r.stage);
  const roles = rows.map((r) => (r.stage.workspaceId === null ? null : roleOfRank(r.rank)));
  const isAuthor = pipeline.authorId === actor.userId;
  if (!isAuthor && roles.every((r) => r === null)) throw pipelineNotFound(id);
  return { pipeline, stages, roles, isAuthor };
}

/** The stage at `order`: 404 for an order other than 0, 1, 2. */
export function stageAt(ctx: PipelineContext, order: number): PipelineStageRow {
  const stage = isStageOrder(order) ? ctx.stages[order] : undefined;
  if (!stage) throw stageNotFound(order);
  return stage;
}

/** Any role in the (bound) stage `order`: else 400 for an unbound stage, 403 «Доступ запрещён» for no role. */
export function requireStageRole(ctx: PipelineContext, order: number): WorkspaceRole {
  const stage = stageAt(ctx, order);
  if (stage.workspaceId === null) throw stageNotBound(order);
  const role = ctx.roles[order];
  if (!role) throw new AppError('forbidden');
  return role;
}

/** Администратор in the (bound) stage `order`: else 400 for an unbound stage, 403 «Доступ запрещён». */
export function requireStageAdmin(ctx: PipelineContext, order: number): void {
  if (!roleIsAdmin(requireStageRole(ctx, order))) throw new AppError('forbidden');
}

/** Rename, delete, bind, unbind: Администратор in every bound stage; while none is bound, the author. Else 403. */
export function requirePipelineAdmin(ctx: PipelineContext): void {
  const bound = ctx.stages.filter((s) => s.workspaceId !== null);
  const allowed = bound.length === 0 ? ctx.isAuthor : bound.every((s) => roleIsAdmin(ctx.roles[s.order]));
  if (!allowed) throw new AppError('forbidden');
}
