import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineObjectLinks, pipelineStages, pipelines } from '../../db/schema/pipelines';
import type { Actor } from '../auth/actor';
import { actorRoleRankSql } from '../access/workspace-access';
import { roleOfRank, type WorkspaceRole } from '../access/roles';
import type { PipelineRow, PipelineStageRow } from './access';
import { STAGE_NAMES } from './stages';
import { workspaceRef } from '../workspaces/views';

/*
 * Rows of pipelines and their stages, tx-first and actor-free except where a caller's role is part of the row
 * (stage views). Links and rules are erased by the operations that own them: see eraseStageLinks.
 */

/** A pipeline and its three stages, all unbound (POST /api/pipeline). */
export async function insertPipeline(
  tx: DbOrTx,
  values: { name: string; description: string; authorId: number },
): Promise<{ pipeline: PipelineRow; stages: PipelineStageRow[] }> {
  const [pipeline] = await tx.insert(pipelines).values(values).returning();
  const stages = await tx
    .insert(pipelineStages)
    .values(STAGE_NAMES.map((_, order) => ({ pipelineId: pipeline.id, order })))
    .returning();
  return { pipeline, stages: stages.sort((a, b) => a.order - b.order) };
}

export async function updatePipelineRow(
  tx: DbOrTx,
  id: number,
  change: { name?: string; description?: string },
): Promise<PipelineRow> {
  const [row] = await tx
    .update(pipelines)
    .set({ ...change, updatedAt: sql`now()` })
    .where(eq(pipelines.id, id))
    .returning();
  return row;
}

/** Stages, links, rules and history go by cascade; the workspaces and their objects stay. */
export async function deletePipelineRow(tx: DbOrTx, id: number): Promise<void> {
  await tx.delete(pipelines).where(eq(pipelines.id, id));
}

/** Binds (workspaceId) or unbinds (null) a stage. */
export async function setStageWorkspace(
  tx: DbOrTx,
  stageId: number,
  workspaceId: number | null,
  boundBy: number | null,
): Promise<PipelineStageRow> {
  const [row] = await tx
    .update(pipelineStages)
    .set({ workspaceId, boundBy, boundAt: workspaceId === null ? null : sql`now()` })
    .where(eq(pipelineStages.id, stageId))
    .returning();
  return row;
}

/**
 * Forgets which copy matches which original on both stage pairs that touch stage `order` (its previous stage -> it,
 * it -> its next stage): originals become new, copies target_only. Objects and substitution rules stay.
 */
export async function eraseStageLinks(tx: DbOrTx, pipelineId: number, order: number): Promise<number> {
  const rows = await tx
    .delete(pipelineObjectLinks)
    .where(
      and(eq(pipelineObjectLinks.pipelineId, pipelineId), inArray(pipelineObjectLinks.fromOrder, [order - 1, order])),
    )
    .returning({ id: pipelineObjectLinks.id });
  return rows.length;
}

/** The stage a workspace is bound to, with its pipeline's name; undefined when it is free. */
export async function stageOfWorkspace(
  db: DbOrTx,
  workspaceId: number,
): Promise<{ stage: PipelineStageRow; pipelineName: string } | undefined> {
  const [row] = await db
    .select({ stage: pipelineStages, pipelineName: pipelines.name })
    .from(pipelineStages)
    .innerJoin(pipelines, eq(pipelines.id, pipelineStages.pipelineId))
    .where(eq(pipelineStages.workspaceId, workspaceId));
  return row;
}

/** Of the given workspaces, those bound to a stage of any pipeline. */
export async function boundWorkspaceIds(db: DbOrTx, workspaceIds: number[]): Promise<Set<number>> {
  if (workspaceIds.length === 0) return new Set();
  const rows = await db
    .select({ id: pipelineStages.workspaceId })
    .from(pipelineStages)
    .where(inArray(pipelineStages.workspaceId, workspaceIds));
  return new Set(rows.map((r) => r.id!));
}

export interface StageWithWorkspace {
  stage: PipelineStageRow;
  workspaceName: string | null;
  /** The caller's strongest role in the bound workspace; null when unbound or none. */
  role: WorkspaceRole | null;
}

/** The stages of the given pipelines with their workspace names and the caller's roles, ordered by pipeline and order. */
export async function stagesWithWorkspaces(
  db: DbOrTx,
  actor: Actor,
  pipelineIds: number[],
): Promise<Map<number, StageWithWorkspace[]>> {
  const byPipeline = new Map<number, StageWithWorkspace[]>(pipelineIds.map((id) => [id, []]));
  if (pipelineIds.length === 0) return byPipeline;
  const workspaces = workspaceRef();
  const rows = await db
    .select({
      stage: pipelineStages,
      workspaceName: workspaces.name,
      rank: actorRoleRankSql(actor, pipelineStages.workspaceId),
    })
    .from(pipelineStages)
    .leftJoin(workspaces, eq(workspaces.id, pipelineStages.workspaceId))
    .where(inArray(pipelineStages.pipelineId, pipelineIds))
    .orderBy(asc(pipelineStages.pipelineId), asc(pipelineStages.order));
  for (const r of rows) {
    byPipeline.get(r.stage.pipelineId)?.push({
      stage: r.stage,
      workspaceName: r.workspaceName,
      role: r.stage.workspaceId === null ? null : roleOfRank(r.rank),
    });
  }
  return byPipeline;
}
