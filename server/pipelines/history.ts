import { and, count, desc, eq, sql } from 'drizzle-orm';
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

/**
 * A deployment of the pipeline for a rollback, its row locked until the transaction ends, with the rollback that
 * undid it (null: none); undefined when the pipeline has no such deployment.
 */
export async function deploymentForRollback(tx: Tx, pipelineId: number, id: number) {
  const [row] = await tx
    .select()
    .from(pipelineDeployments)
    .where(and(eq(pipelineDeployments.id, id), eq(pipelineDeployments.pipelineId, pipelineId)))
    .for('update');
  if (!row) return undefined;
  const [undone] = await tx
    .select({ id: pipelineDeployments.id })
    .from(pipelineDeployments)
    .where(eq(pipelineDeployments.rolledBackId, id));
  return { ...row, rolledBackBy: undone?.id ?? null };
}

type DeploymentRef = { id: number; pipelineId: number; fromStage: number };

/**
 * The objects of the receiving stage that deploys after `d` into the same stage changed and that were not rolled
 * back since: `type:target_id` -> the latest such deploy.
 */
export async function laterDeploysTouching(tx: Tx, d: DeploymentRef): Promise<Map<string, number>> {
  const { rows } = await tx.execute<{ key: string; id: number }>(sql`
    select o->>'type' || ':' || (o->>'target_id') as key, max(l.id) as id
    from pipeline_deployments l, jsonb_array_elements(l.objects) o
    where l.pipeline_id = ${d.pipelineId} and l.from_stage = ${d.fromStage} and l.id > ${d.id} and l.kind = 'deploy'
      and not exists (select 1 from pipeline_deployments r where r.rolled_back_id = l.id)
    group by 1`);
  return new Map(rows.map((r) => [r.key, Number(r.id)]));
}

/**
 * Per object of `d` (`type:target_id`): the latest deploy before `d` that carried the same original to the same copy
 * and was not rolled back: when it ran (timestamptz text) and what it did (absent: no such deploy).
 */
export async function previousDeploys(
  tx: Tx,
  d: DeploymentRef,
  objects: { type: string; source_id: number; target_id: number }[],
): Promise<Map<string, { at: string; action: DeployAction }>> {
  const out = new Map<string, { at: string; action: DeployAction }>();
  if (!objects.length) return out;
  // The time as text: exact to the microsecond (a Date keeps milliseconds), so an original not edited since is same.
  const { rows } = await tx.execute<{ key: string; at: string; action: DeployAction }>(sql`
    select distinct on (1) o->>'type' || ':' || (o->>'source_id') || ':' || (o->>'target_id') as key,
      p.created_at::text as at, o->>'action' as action
    from pipeline_deployments p, jsonb_array_elements(p.objects) o
    where p.pipeline_id = ${d.pipelineId} and p.from_stage = ${d.fromStage} and p.id < ${d.id} and p.kind = 'deploy'
      and not exists (select 1 from pipeline_deployments r where r.rolled_back_id = p.id)
    order by 1, p.id desc`);
  const found = new Map(rows.map((r) => [r.key, { at: r.at, action: r.action }]));
  for (const o of objects) {
    const prev = found.get(`${o.type}:${o.source_id}:${o.target_id}`);
    if (prev) out.set(`${o.type}:${o.target_id}`, prev);
  }
  return out;
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
