import { and, count, eq, ilike, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineStages, pipelines } from '../../db/schema/pipelines';
import type { Actor } from '../auth/actor';
import { actorRoleRankSql } from '../access/workspace-access';
import type { AppDeps } from '../app/deps';
import { containsPattern, orderByOf, pageOf, type PageRequest } from '../kernel/paging';
import { pipelineForCaller, requirePipelineAdmin } from './access';
import { deletePipelineRow, insertPipeline, stagesWithWorkspaces, updatePipelineRow } from './store';
import { pipelineView, type PipelineView } from './views';

/*
 * Pipeline administration: GET/POST /api/pipeline, GET/PUT/DELETE /api/pipeline/{id}. Binding lives in binding.ts,
 * substitution rules in source-rules.ts; who may do what is access.ts.
 */

export const PIPELINE_SORT_FIELDS = ['id', 'name', 'created_at', 'updated_at'] as const;

export interface PipelineInput {
  name: string;
  description?: string;
}

/** Pipelines the caller sees: they are the author, or hold any role in a bound stage's workspace. */
function visibleToCaller(actor: Actor): SQL {
  const roleInStage = sql`exists (select 1 from ${pipelineStages} where ${pipelineStages.pipelineId} = ${pipelines.id}
      and ${isNotNull(pipelineStages.workspaceId)} and ${actorRoleRankSql(actor, pipelineStages.workspaceId)} is not null)`;
  return or(eq(pipelines.authorId, actor.userId), roleInStage)!;
}

/** GET /api/pipeline: a page of the pipelines the caller sees; `query` searches the name. */
export async function listPipelines(deps: AppDeps, actor: Actor, input: PageRequest & { query?: string }) {
  const where = and(
    visibleToCaller(actor),
    input.query ? ilike(pipelines.name, containsPattern(input.query)) : undefined,
  );
  const [{ total }] = await deps.db.select({ total: count() }).from(pipelines).where(where);
  const rows = await deps.db
    .select()
    .from(pipelines)
    .where(where)
    .orderBy(
      ...orderByOf(
        input.sort,
        {
          id: pipelines.id,
          name: sql`lower(${pipelines.name})`,
          created_at: pipelines.createdAt,
          updated_at: pipelines.updatedAt,
        },
        [sql`lower(${pipelines.name})`],
        pipelines.id,
      ),
    )
    .limit(input.size)
    .offset(input.page * input.size);
  const stages = await stagesWithWorkspaces(
    deps.db,
    actor,
    rows.map((r) => r.id),
  );
  return pageOf(
    rows.map((r) => pipelineView(r, stages.get(r.id) ?? [], actor.userId)),
    input,
    total,
  );
}

/** The pipeline as the caller sees it (after an access check made by the caller of this function). */
async function viewOf(db: DbOrTx, actor: Actor, row: typeof pipelines.$inferSelect): Promise<PipelineView> {
  const stages = await stagesWithWorkspaces(db, actor, [row.id]);
  return pipelineView(row, stages.get(row.id) ?? [], actor.userId);
}

/** POST /api/pipeline: any account; the three stages come with it, unbound, and the caller is the author. */
export async function createPipeline(deps: AppDeps, actor: Actor, input: PipelineInput): Promise<PipelineView> {
  return deps.db.transaction(async (tx) => {
    const { pipeline } = await insertPipeline(tx, {
      name: input.name,
      description: input.description ?? '',
      authorId: actor.userId,
    });
    return viewOf(tx, actor, pipeline);
  });
}

/** GET /api/pipeline/{id}: any role in a bound stage, or the author. */
export async function getPipeline(deps: AppDeps, actor: Actor, id: number): Promise<PipelineView> {
  const ctx = await pipelineForCaller(deps.db, actor, id);
  return viewOf(deps.db, actor, ctx.pipeline);
}

/** PUT /api/pipeline/{id}: rename or describe (a left-out description is kept). */
export async function updatePipeline(
  deps: AppDeps,
  actor: Actor,
  id: number,
  input: PipelineInput,
): Promise<PipelineView> {
  return deps.db.transaction(async (tx) => {
    requirePipelineAdmin(await pipelineForCaller(tx, actor, id, { lock: true }));
    const row = await updatePipelineRow(tx, id, {
      name: input.name,
      ...(input.description !== undefined && { description: input.description }),
    });
    return viewOf(tx, actor, row);
  });
}

/**
 * DELETE /api/pipeline/{id}: deletes the pipeline with its stages, copy links, substitution rules and history; the
 * workspaces and their objects stay. The reference platform answers 500 here and keeps the pipeline: fixed on purpose.
 */
export async function deletePipeline(deps: AppDeps, actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
  await deps.db.transaction(async (tx) => {
    requirePipelineAdmin(await pipelineForCaller(tx, actor, id, { lock: true }));
    await deletePipelineRow(tx, id);
  });
  return { id, deleted: true };
}
