import { sql } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { badRequest } from '../kernel/errors';
import { diffSnapshots, type RevisionDiffEntry } from '../revisions/diff';
import { revisionsAt } from '../revisions/store';
import { pipelineForCaller, requireStageRole } from './access';
import { DEPLOY_KINDS, KIND_TABLE, type DeployKind } from './deploy/map';
import { MSG } from './messages';

/*
 * GET /api/pipeline/{id}/compare?from=0|1: the objects of stage `from` and of the next stage with their comparison
 * status (spec, States and transitions), by edit time and never by content:
 * - new: an original without a live copy in the next stage (never deployed, or its link was erased by an unbind, or
 *   its copy was deleted);
 * - same / changed: the original was (not) saved since the edit time its last deploy recorded (any save counts,
 *   even one that changes nothing; a data source is changed at once after its first deploy);
 * - target_only: an object of the next stage that is no live original's copy.
 * Links whose original or copy is gone, or has left the stage's workspace, are ignored.
 *
 * With `details=true` each changed object also carries `changes`: the changed paths (server/revisions/diff.ts) from
 * what its last deploy carried (the original's revision current when its link was deployed) to the original now (its
 * latest revision); null when either revision is missing (an object saved only before revisions were kept).
 */

export type CompareStatus = 'new' | 'changed' | 'same' | 'target_only';

export interface ComparedObject {
  type: DeployKind;
  /** The original's id; for target_only the next stage's object's own. */
  id: number;
  name: string;
  status: CompareStatus;
  /** The copy in the next stage; null for new. */
  target_id: number | null;
  /** details=true, changed objects only: what changed since the last deploy; null without revisions to compare. */
  changes?: RevisionDiffEntry[] | null;
}

export interface CompareResult {
  pipeline_id: number;
  from_stage: number;
  to_stage: number;
  objects: ComparedObject[];
}

/** `from` as the query gives it: only 0 and 1 have a next stage; anything else is not an adjacent pair. */
function fromStageOf(from: string | number | undefined): 0 | 1 {
  const text = String(from ?? '').trim();
  if (text === '0' || text === '1') return Number(text) as 0 | 1;
  throw badRequest(MSG.adjacentOnly);
}

export async function compareStages(
  deps: AppDeps,
  actor: Actor,
  pipelineId: number,
  fromParam: string | number | undefined,
  opts: { details?: boolean } = {},
): Promise<CompareResult> {
  const ctx = await pipelineForCaller(deps.db, actor, pipelineId);
  const from = fromStageOf(fromParam);
  const source = ctx.stages[from].workspaceId;
  const target = ctx.stages[from + 1].workspaceId;
  if (source === null || target === null) throw badRequest(MSG.bothStagesBound);
  requireStageRole(ctx, from);
  requireStageRole(ctx, from + 1);
  const ofPair = (kind: DeployKind) =>
    sql`l.pipeline_id = ${pipelineId} and l.from_order = ${from} and l.object_type = ${kind}`;
  const parts = DEPLOY_KINDS.map((kind) => {
    const table = sql.raw(KIND_TABLE[kind]);
    return sql`(select ${kind} as type, o.id, o.name,
        case when c.id is null then 'new' when o.updated_at > c.original_updated_at then 'changed' else 'same' end
          as status,
        c.id as target_id, c.deployed_at
      from ${table} o
      left join lateral (
        select t.id, l.original_updated_at, l.deployed_at from pipeline_object_links l
        join ${table} t on t.id = l.copy_id and t.workspace_id = ${target}
        where ${ofPair(kind)} and l.original_id = o.id
      ) c on true
      where o.workspace_id = ${source})
      union all
      (select ${kind}, t.id, t.name, 'target_only', t.id, null from ${table} t
      where t.workspace_id = ${target} and not exists (
        select 1 from pipeline_object_links l where ${ofPair(kind)} and l.copy_id = t.id
          and exists (select 1 from ${table} o where o.id = l.original_id and o.workspace_id = ${source})))`;
  });
  const rows = await deps.db.execute<{
    type: DeployKind;
    id: number;
    name: string;
    status: CompareStatus;
    target_id: number | null;
    deployed_at: string | Date | null;
  }>(sql.join(parts, sql` union all `));
  const order = (k: DeployKind) => DEPLOY_KINDS.indexOf(k);
  const changes = opts.details ? await changesSinceDeploy(deps, rows.rows) : undefined;
  const objects: ComparedObject[] = rows.rows
    .map((r) => ({
      type: r.type,
      id: r.id,
      name: r.name,
      status: r.status,
      target_id: r.target_id,
      ...(changes && r.status === 'changed' && { changes: changes.get(`${r.type}:${r.id}`) ?? null }),
    }))
    .sort((a, b) => order(a.type) - order(b.type) || a.name.localeCompare(b.name) || a.id - b.id);
  return { pipeline_id: pipelineId, from_stage: from, to_stage: from + 1, objects };
}

/** Later than any revision: the latest one of each object is "the original now". */
const NOW_AND_LATER = new Date('9999-12-31T00:00:00Z');

/**
 * The changed paths of each changed original, keyed `type:id`: one revision read per kind for "now" and one per kind
 * and deploy time for "as deployed" (every link a deploy wrote has that deploy's time).
 */
async function changesSinceDeploy(
  deps: AppDeps,
  rows: { type: DeployKind; id: number; status: CompareStatus; deployed_at: string | Date | null }[],
): Promise<Map<string, RevisionDiffEntry[] | null>> {
  const out = new Map<string, RevisionDiffEntry[] | null>();
  for (const kind of DEPLOY_KINDS) {
    const changed = rows.filter((r) => r.type === kind && r.status === 'changed' && r.deployed_at !== null);
    if (!changed.length) continue;
    const now = await revisionsAt(
      deps.db,
      kind,
      changed.map((r) => r.id),
      NOW_AND_LATER,
    );
    const byTime = new Map<number, number[]>();
    for (const r of changed) {
      const at = new Date(r.deployed_at!).getTime();
      byTime.set(at, [...(byTime.get(at) ?? []), r.id]);
    }
    for (const [at, ids] of byTime) {
      const deployed = await revisionsAt(deps.db, kind, ids, new Date(at));
      for (const id of ids) {
        const before = deployed.get(id);
        const after = now.get(id);
        out.set(`${kind}:${id}`, before && after ? diffSnapshots(before.snapshot, after.snapshot) : null);
      }
    }
  }
  return out;
}
