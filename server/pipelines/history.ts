import { count, desc, eq } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Tx } from '../../db/client';
import { pipelineDeployments } from '../../db/schema/pipelines';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { pageOf } from '../kernel/paging';
import { pipelineForCaller } from './access';
import { STAGE_NAMES } from './stages';
import { userRef } from '../users/views';

/*
 * Deployment history, beyond the reference platform (GET /api/pipeline/{id}/deployments): each successful deploy
 * with who, when, from which stage, the per-object actions and the warnings. A failed deploy changes nothing and is
 * not recorded. A rollback (server/pipelines/deploy/rollback.ts) is recorded as a deployment of its own (kind
 * 'rollback', the deploy it undid, objects 'restored' or 'deleted'); the deploy it undid shows which rollback did.
 * Readable by anyone who can see the pipeline.
 */

/** Who ran it, by name: joined from the users area (one query per page). */
const users = userRef();

export type DeploymentKind = 'deploy' | 'rollback';
/** What a deploy did to an object of the receiving stage. */
export type DeployAction = 'created' | 'updated';
/** What a rollback did: an updated object put back as it was before the deploy, a created one deleted. */
export type RollbackAction = 'restored' | 'deleted';

export interface DeploymentObject<A extends string = DeployAction> {
  type: 'data_source' | 'dataset' | 'widget' | 'dashboard';
  /** The original in the source stage. */
  source_id: number;
  /** The object of the receiving stage. */
  target_id: number;
  action: A;
  name: string;
}

type AnyDeploymentObject = DeploymentObject<DeployAction | RollbackAction>;

export async function recordDeployment(
  tx: Tx,
  pair: { pipelineId: number; fromOrder: number },
  userId: number,
  objects: AnyDeploymentObject[],
  warnings: string[],
  rollback?: { of: number },
): Promise<{ id: number; createdAt: Date }> {
  const [row] = await tx
    .insert(pipelineDeployments)
    .values({
      pipelineId: pair.pipelineId,
      fromStage: pair.fromOrder,
      userId,
      objects,
      warnings,
      kind: rollback ? 'rollback' : 'deploy',
      rolledBackId: rollback?.of ?? null,
    })
    .returning({ id: pipelineDeployments.id, createdAt: pipelineDeployments.createdAt });
  return row;
}

export interface DeploymentView {
  id: number;
  from_stage: number;
  from_stage_name: string;
  to_stage: number;
  to_stage_name: string;
  user_id: number | null;
  username: string | null;
  created_at: string;
  kind: DeploymentKind;
  /** A rollback: the deploy it undid. */
  rolled_back_id: number | null;
  /** A deploy that was rolled back: the rollback that undid it. */
  rolled_back_by: number | null;
  objects: AnyDeploymentObject[];
  warnings: string[];
}

/** The rollback that undid a deployment (joined to each row of the page). */
const undoneBy = alias(pipelineDeployments, 'undone_by');

/** Newest first. */
export async function listDeployments(
  deps: AppDeps,
  actor: Actor,
  pipelineId: number,
  req: { page: number; size: number },
) {
  await pipelineForCaller(deps.db, actor, pipelineId);
  const where = eq(pipelineDeployments.pipelineId, pipelineId);
  const [rows, [total]] = await Promise.all([
    deps.db
      .select({ d: pipelineDeployments, username: users.username, rolledBackBy: undoneBy.id })
      .from(pipelineDeployments)
      .leftJoin(users, eq(users.id, pipelineDeployments.userId))
      .leftJoin(undoneBy, eq(undoneBy.rolledBackId, pipelineDeployments.id))
      .where(where)
      .orderBy(desc(pipelineDeployments.createdAt), desc(pipelineDeployments.id))
      .limit(req.size)
      .offset(req.page * req.size),
    deps.db.select({ n: count() }).from(pipelineDeployments).where(where),
  ]);
  const content: DeploymentView[] = rows.map(({ d, username, rolledBackBy }) => ({
    id: d.id,
    from_stage: d.fromStage,
    from_stage_name: STAGE_NAMES[d.fromStage],
    to_stage: d.fromStage + 1,
    to_stage_name: STAGE_NAMES[d.fromStage + 1],
    user_id: d.userId,
    username,
    created_at: d.createdAt.toISOString(),
    kind: d.kind as DeploymentKind,
    rolled_back_id: d.rolledBackId,
    rolled_back_by: rolledBackBy,
    objects: d.objects as AnyDeploymentObject[],
    warnings: d.warnings as string[],
  }));
  return pageOf(content, req, total.n);
}
