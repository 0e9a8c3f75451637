import { count, desc, eq } from 'drizzle-orm';
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
 * not recorded. Readable by anyone who can see the pipeline.
 */

/** Who ran it, by name: joined from the users area (one query per page). */
const users = userRef();

export interface DeploymentObject {
  type: 'data_source' | 'dataset' | 'widget' | 'dashboard';
  source_id: number;
  target_id: number;
  action: 'created' | 'updated';
  name: string;
}

export async function recordDeployment(
  tx: Tx,
  pair: { pipelineId: number; fromOrder: number },
  userId: number,
  objects: DeploymentObject[],
  warnings: string[],
): Promise<{ id: number }> {
  const [row] = await tx
    .insert(pipelineDeployments)
    .values({ pipelineId: pair.pipelineId, fromStage: pair.fromOrder, userId, objects, warnings })
    .returning({ id: pipelineDeployments.id });
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
  objects: DeploymentObject[];
  warnings: string[];
}

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
      .select({ d: pipelineDeployments, username: users.username })
      .from(pipelineDeployments)
      .leftJoin(users, eq(users.id, pipelineDeployments.userId))
      .where(where)
      .orderBy(desc(pipelineDeployments.createdAt), desc(pipelineDeployments.id))
      .limit(req.size)
      .offset(req.page * req.size),
    deps.db.select({ n: count() }).from(pipelineDeployments).where(where),
  ]);
  const content: DeploymentView[] = rows.map(({ d, username }) => ({
    id: d.id,
    from_stage: d.fromStage,
    from_stage_name: STAGE_NAMES[d.fromStage],
    to_stage: d.fromStage + 1,
    to_stage_name: STAGE_NAMES[d.fromStage + 1],
    user_id: d.userId,
    username,
    created_at: d.createdAt.toISOString(),
    objects: d.objects as DeploymentObject[],
    warnings: d.warnings as string[],
  }));
  return pageOf(content, req, total.n);
}
