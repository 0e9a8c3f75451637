import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import type { Actor } from '../../auth/actor';
import type { AppDeps } from '../../app/deps';
import { deleteRightsOfObjects } from '../../access/object-rights-store';
import { ints } from '../../objects/copy-map';
import { badRequest, notFound } from '../../kernel/errors';
import { readCachesChanged } from '../../kernel/read-epoch';
import { removeSourceFolder } from '../../data-sources/store';
import { datasetsOnSources } from '../../datasets/views';
import { widgetsOnDatasets } from '../../widgets/views';
import { dashboardsNamingWidgets } from '../../dashboards/store';
import { endRunsOf, stopRunsAfter, type EndedRuns } from '../../etl/etl';
import { recordRevisions, revisionBefore } from '../../revisions/store';
import { restoreSnapshots } from '../../revisions/restore';
import { pipelineForCaller, requireStageAdmin, requireStageRole } from '../access';
import {
  deploymentForRollback,
  laterDeploysTouching,
  previousDeploys,
  recordDeployment,
  type DeploymentObject,
  type RollbackAction,
} from '../history';
import { DEPLOY_KINDS, KIND_TABLE, type DeployKind } from './map';
import { OBJECT_LABEL } from './messages';

/*
 * POST /api/pipeline/{id}/deployments/{deploymentId}/rollback: the receiving stage put back as it was before that
 * deploy, in ONE transaction under the deploy's locks (the pipeline, then the receiving stage), recorded as a
 * deployment of its own (kind 'rollback'):
 * - every object the deploy updated gets the snapshot of its revision before the deploy's (server/revisions: ids of
 *   the object and of its children stay; a data source keeps its current secrets) and a 'rolled_back' revision;
 * - every object it created is deleted, dashboards, widgets, datasets, then sources, with its rights;
 * - the copy links follow: a created object's link goes, an updated one's goes back to the deploy before (so compare
 *   says changed again when the original was edited since).
 * Refused (400, nothing changed) when that would lose work or leave something dangling, naming each object: one a
 * later deploy (not rolled back) changed, one edited after the deploy (a save or restore after the deploy's revision),
 * an updated one with no revision from before the deploy, and a created one something outside this deploy came to
 * depend on (a dataset on a created source, a widget on a created dataset, a dashboard showing a created widget).
 * A deploy is rolled back once; a rollback is not rolled back. Objects deleted since the deploy are skipped with a
 * warning line. Rights as for a deploy into that stage: Администратор there and any role in the source stage.
 */

/** The steps after which a test may inject a failure (never reachable over the API). */
export type RollbackStep = 'restore' | 'delete' | 'links' | 'record';

export interface RollbackOptions {
  /** Test only: throw after this step, inside the transaction. */
  faultAfter?: RollbackStep;
}

export interface RollbackResult {
  /** The rollback's own deployment id. */
  deployment_id: number;
  rolled_back_id: number;
  pipeline_id: number;
  from_stage: number;
  to_stage: number;
  objects: DeploymentObject<RollbackAction>[];
  warnings: string[];
}

const MSG = {
  notFound: (id: number) => `Развёртывание не найдено (id ${id})`,
  ofRollback: 'Откат нельзя откатить: разверните объекты заново',
  already: (by: number) => `Развёртывание уже откачено (откат id ${by})`,
  refused: (reasons: string[]) => {
    const shown = reasons.slice(0, 20).join('; ');
    const more = reasons.length > 20 ? `; и ещё ${reasons.length - 20}` : '';
    return `Откат невозможен: ${shown}${more}`;
  },
  gone: (o: Named) => `${OBJECT_LABEL[o.type]} «${o.name}» (id ${o.target_id}) удалён после развёртывания: пропущен`,
  missing: (refs: string[]) => `Восстановлено без ссылок на объекты, которых больше нет: ${refs.join(', ')}`,
};

type Named = { type: DeployKind; target_id: number; name: string };
const named = (o: Named) => `${OBJECT_LABEL[o.type].toLowerCase()} «${o.name}» (id ${o.target_id})`;
const Named = (o: Named) => `${OBJECT_LABEL[o.type]} «${o.name}» (id ${o.target_id})`;

const byKind = <T extends { type: DeployKind }>(list: T[], kind: DeployKind) => list.filter((o) => o.type === kind);

export async function rollbackDeployment(
  deps: AppDeps,
  actor: Actor,
  pipelineId: number,
  deploymentId: number,
  opts: RollbackOptions = {},
): Promise<RollbackResult> {
  const committed = await deps.db.transaction(async (tx) => {
    const ctx = await pipelineForCaller(tx, actor, pipelineId, { lock: true });
    const deployment = await deploymentForRollback(tx, pipelineId, deploymentId);
    if (!deployment) throw notFound(MSG.notFound(deploymentId));
    const from = deployment.fromStage;
    // Rights as for a deploy into the deployment's receiving stage (both stages bound, else 400).
    requireStageRole(ctx, from);
    requireStageAdmin(ctx, from + 1);
    const target = ctx.stages[from + 1];
    // Deploys and rollbacks into one stage never interleave: the second waits here until the first commits.
    await tx.execute(sql`select id from pipeline_stages where id = ${target.id} for update`);
    if (deployment.kind === 'rollback') throw badRequest(MSG.ofRollback);
    if (deployment.rolledBackBy !== null) throw badRequest(MSG.already(deployment.rolledBackBy));
    return undo(tx, actor, { pipelineId, from, targetWorkspaceId: target.workspaceId! }, deployment, opts);
  });
  readCachesChanged(deps);
  await Promise.all([
    ...committed.sourcesTouched.map((id) => deps.connectors.release(id).catch(() => undefined)),
    ...committed.deletedFileSources.map((uuid) => removeSourceFolder(deps, uuid)),
    stopRunsAfter(deps, committed.endedRuns),
  ]);
  for (const id of committed.deletedSources) deps.localQueries.abortOf(id);
  return committed.result;
}

interface Stage {
  pipelineId: number;
  from: number;
  targetWorkspaceId: number;
}

type Deployment = NonNullable<Awaited<ReturnType<typeof deploymentForRollback>>>;
type Live = DeploymentObject & { updatedAt: Date };

async function undo(tx: Tx, actor: Actor, stage: Stage, d: Deployment, opts: RollbackOptions) {
  const fault = (step: RollbackStep) => {
    if (opts.faultAfter === step) throw new Error(`injected fault after ${step}`);
  };
  const all = d.objects as DeploymentObject[];
  const key = (o: { type: DeployKind; target_id: number }) => `${o.type}:${o.target_id}`;
  const position = new Map(all.map((o, i) => [key(o), i]));
  const live = await liveObjects(tx, stage.targetWorkspaceId, all);
  const present = new Set(live.map(key));
  const gone = all.filter((o) => !present.has(key(o)));
  const created = live.filter((o) => o.action === 'created');
  const updated = live.filter((o) => o.action === 'updated');

  // ---- what would be lost or left dangling: refuse, naming each ----
  const reasons: string[] = [];
  const later = await laterDeploysTouching(tx, d);
  for (const o of live) {
    const by = later.get(key(o));
    if (by) reasons.push(`${Named(o)} изменён более поздним развёртыванием (id ${by})`);
  }
  const before = new Map<DeployKind, Awaited<ReturnType<typeof revisionBefore>>>();
  for (const kind of DEPLOY_KINDS) {
    const mine = byKind(live, kind);
    if (!mine.length) continue;
    const ids = mine.map((o) => o.target_id);
    const edited = await editedAfter(tx, kind, ids, d.id);
    const revs = await revisionBefore(tx, kind, ids, d.id);
    before.set(kind, revs);
    for (const o of mine) {
      // Without a revision of the deploy (one older than revisions), its edit time says whether it was edited since.
      const editedSince = revs.has(o.target_id) ? edited.has(o.target_id) : o.updatedAt > d.createdAt;
      if (editedSince && !later.has(key(o)))
        reasons.push(`${Named(o)} изменён после развёртывания: откат потерял бы эти изменения`);
      if (o.action === 'updated' && !revs.get(o.target_id))
        reasons.push(`${Named(o)}: нет сохранённой версии до развёртывания`);
    }
  }
  reasons.push(...(await dependentsOutside(tx, created, all)));
  if (reasons.length) throw badRequest(MSG.refused(reasons));

  // ---- updated objects back as they were, in dependency order (sources first) ----
  const warnings = gone.map(MSG.gone);
  let endedRuns: EndedRuns = { datasetIds: [], runs: [] };
  const restoredDatasets = byKind(updated, 'dataset').map((o) => o.target_id);
  // Back on its source a dataset materialised since ends its runs, as PUT /api/dataset/{id} live: true does.
  const nowLive = restoredDatasets.filter((id) => before.get('dataset')?.get(id)?.snapshot.row.live === true);
  if (nowLive.length) endedRuns = await endRunsOf(tx, { datasetIds: await notLive(tx, nowLive) }, 'live');
  for (const kind of DEPLOY_KINDS) {
    const mine = byKind(updated, kind);
    if (!mine.length) continue;
    const revs = before.get(kind)!;
    const { missing } = await restoreSnapshots(
      tx,
      kind,
      mine.map((o) => ({ id: o.target_id, snapshot: revs.get(o.target_id)!.snapshot })),
    );
    if (missing.length) warnings.push(MSG.missing(missing));
  }
  fault('restore');

  // ---- created objects deleted, dependents first ----
  const deleted = { data_source: [], dataset: [], widget: [], dashboard: [] } as Record<DeployKind, number[]>;
  for (const kind of [...DEPLOY_KINDS].reverse()) deleted[kind] = byKind(created, kind).map((o) => o.target_id);
  const fileSources = await fileSourceUuids(tx, deleted.data_source);
  const deletedRuns = deleted.dataset.length ? await endRunsOf(tx, { datasetIds: deleted.dataset }, 'deleted') : null;
  for (const kind of [...DEPLOY_KINDS].reverse()) {
    const ids = deleted[kind];
    if (!ids.length) continue;
    await deleteRightsOfObjects(tx, kind, ids);
    await tx.execute(sql`delete from ${sql.identifier(KIND_TABLE[kind])} where id = any(${ints(ids)})`);
  }
  fault('delete');

  // ---- copy links: created ones go, updated ones back to the deploy before ----
  await restoreLinks(tx, stage, d, created, updated);
  fault('links');

  // ---- the rollback as a deployment of its own, and the restored objects' revisions ----
  // In the deploy's order; a restored object under the name it has again.
  const objects: DeploymentObject<RollbackAction>[] = [...updated, ...created]
    .sort((a, b) => position.get(key(a))! - position.get(key(b))!)
    .map((o) => ({
      type: o.type,
      source_id: o.source_id,
      target_id: o.target_id,
      action: o.action === 'created' ? 'deleted' : 'restored',
      name: o.action === 'created' ? o.name : String(before.get(o.type)?.get(o.target_id)?.snapshot.row.name ?? o.name),
    }));
  const rollback = await recordDeployment(
    tx,
    { pipelineId: stage.pipelineId, fromOrder: stage.from },
    actor.userId,
    objects,
    warnings,
    { of: d.id },
  );
  for (const kind of DEPLOY_KINDS) {
    const ids = byKind(updated, kind).map((o) => o.target_id);
    if (ids.length) await recordRevisions(tx, kind, ids, 'rolled_back', actor.userId, { deploymentId: rollback.id });
  }
  fault('record');

  if (deletedRuns)
    endedRuns = {
      datasetIds: [...endedRuns.datasetIds, ...deletedRuns.datasetIds],
      runs: [...endedRuns.runs, ...deletedRuns.runs],
    };
  return {
    result: {
      deployment_id: rollback.id,
      rolled_back_id: d.id,
      pipeline_id: stage.pipelineId,
      from_stage: stage.from,
      to_stage: stage.from + 1,
      objects,
      warnings,
    } satisfies RollbackResult,
    sourcesTouched: [...byKind(updated, 'data_source').map((o) => o.target_id), ...deleted.data_source],
    deletedSources: deleted.data_source,
    deletedFileSources: fileSources,
    endedRuns,
  };
}

/** The deploy's objects still in the receiving stage, with their current name and edit time (one read per kind). */
async function liveObjects(tx: Tx, workspaceId: number, all: DeploymentObject[]): Promise<Live[]> {
  const out: Live[] = [];
  for (const kind of DEPLOY_KINDS) {
    const mine = byKind(all, kind);
    if (!mine.length) continue;
    const { rows } = await tx.execute<{ id: number; name: string; updated_at: string | Date }>(sql`
      select id, name, updated_at from ${sql.identifier(KIND_TABLE[kind])}
      where id = any(${ints(mine.map((o) => o.target_id))}) and workspace_id = ${workspaceId}`);
    const found = new Map(rows.map((r) => [Number(r.id), r]));
    for (const o of mine) {
      const row = found.get(o.target_id);
      if (row) out.push({ ...o, name: row.name, updatedAt: new Date(row.updated_at) });
    }
  }
  return out;
}

/**
 * The objects with a revision after the deploy's that no deploy or rollback wrote: a save or a restore by a user.
 * (A small read of object_revisions beside server/revisions/store.ts, whose functions answer per object only the
 * latest revision or the one before a deployment.)
 */
async function editedAfter(tx: Tx, kind: DeployKind, ids: number[], deploymentId: number): Promise<Set<number>> {
  const { rows } = await tx.execute<{ object_id: number }>(sql`
    select distinct r.object_id from object_revisions r
    join (select object_id, max(rev) as rev from object_revisions
      where object_type = ${kind}::text and object_id = any(${ints(ids)}) and deployment_id = ${deploymentId}::int
      group by object_id) d on d.object_id = r.object_id
    where r.object_type = ${kind}::text and r.rev > d.rev and r.deployment_id is null`);
  return new Set(rows.map((r) => Number(r.object_id)));
}

/**
 * Created objects something outside this deploy came to depend on: a dataset on a created source, a widget on a
 * created dataset, a dashboard showing or driving a created widget. Objects of the deploy itself do not count: the
 * created ones go too, the updated ones go back to a state from before the created ones existed.
 */
async function dependentsOutside(tx: Tx, created: Live[], all: DeploymentObject[]): Promise<string[]> {
  const inDeploy = (kind: DeployKind) => new Set(byKind(all, kind).map((o) => o.target_id));
  const reasons: string[] = [];
  const blocked = (o: Live, dependent: Named) =>
    reasons.push(`${Named(o)} нельзя удалить: от него зависит ${named(dependent)}, созданный не этим развёртыванием`);

  const createdSources = byKind(created, 'data_source');
  const datasetsOfDeploy = inDeploy('dataset');
  const onSources = await datasetsOnSources(
    tx,
    createdSources.map((o) => o.target_id),
  );
  for (const d of onSources)
    if (!datasetsOfDeploy.has(d.id))
      blocked(
        createdSources.find((o) => o.target_id === d.sourceId)!,
        {
          type: 'dataset',
          target_id: d.id,
          name: d.name,
        },
      );

  const createdDatasets = byKind(created, 'dataset');
  const widgetsOfDeploy = inDeploy('widget');
  const onDatasets = await widgetsOnDatasets(
    tx,
    createdDatasets.map((o) => o.target_id),
    'id',
  );
  for (const w of onDatasets)
    if (!widgetsOfDeploy.has(w.id))
      blocked(
        createdDatasets.find((o) => o.target_id === w.datasetId)!,
        {
          type: 'widget',
          target_id: w.id,
          name: w.name,
        },
      );

  const createdWidgets = byKind(created, 'widget');
  const dashboardsOfDeploy = inDeploy('dashboard');
  const outside = (
    await dashboardsNamingWidgets(
      tx,
      createdWidgets.map((o) => o.target_id),
    )
  ).filter((dash) => !dashboardsOfDeploy.has(dash.id));
  // Which created widget each such dashboard shows: asked per widget, only on the way to a refusal.
  if (outside.length)
    for (const w of createdWidgets)
      for (const dash of await dashboardsNamingWidgets(tx, [w.target_id]))
        if (!dashboardsOfDeploy.has(dash.id)) blocked(w, { type: 'dashboard', target_id: dash.id, name: dash.name });
  return reasons;
}

/** The datasets among `ids` that are materialised now. */
async function notLive(tx: Tx, ids: number[]): Promise<number[]> {
  const { rows } = await tx.execute<{ id: number }>(sql`
    select id from ${sql.identifier(KIND_TABLE.dataset)} where id = any(${ints(ids)}) and not live`);
  return rows.map((r) => Number(r.id));
}

/** The storage folders of the file sources among `ids` (removed once the deletion commits). */
async function fileSourceUuids(tx: Tx, ids: number[]): Promise<string[]> {
  if (!ids.length) return [];
  const { rows } = await tx.execute<{ uuid: string }>(sql`
    select uuid from ${sql.identifier(KIND_TABLE.data_source)} where id = any(${ints(ids)}) and type = 'file'`);
  return rows.map((r) => r.uuid);
}

/**
 * The links of the stage pair as the deploy before left them: a created object's link goes (and any link that names
 * it as an original of the next pair); an updated one's records the time of the latest earlier deploy of it that was
 * not rolled back, as its original's edit time and its deploy time (an original not edited since is same again,
 * one edited since changed; a data source that deploy created is changed, as after any first deploy); without such a
 * deploy, the epoch (changed).
 */
async function restoreLinks(tx: Tx, stage: Stage, d: Deployment, created: Live[], updated: Live[]): Promise<void> {
  for (const kind of DEPLOY_KINDS) {
    const ids = byKind(created, kind).map((o) => o.target_id);
    if (!ids.length) continue;
    await tx.execute(sql`delete from pipeline_object_links
      where pipeline_id = ${stage.pipelineId} and object_type = ${kind} and (
        (from_order = ${stage.from} and copy_id = any(${ints(ids)}))
        or (from_order = ${stage.from + 1} and original_id = any(${ints(ids)})))`);
  }
  if (!updated.length) return;
  const previous = await previousDeploys(tx, d, updated);
  const epoch = new Date(0).toISOString();
  const rows = updated.map((o) => {
    const prev = previous.get(`${o.type}:${o.target_id}`);
    // As saveLinks records it: a data source's first deploy marks its original changed at once.
    const sourceCreated = o.type === 'data_source' && prev?.action === 'created';
    return {
      type: o.type,
      original_id: o.source_id,
      copy_id: o.target_id,
      edited: prev && !sourceCreated ? prev.at : epoch,
      at: prev?.at ?? epoch,
    };
  });
  await tx.execute(sql`
    update pipeline_object_links l set original_updated_at = p.edited, deployed_at = p.at
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      p(type text, original_id int, copy_id int, edited timestamptz, at timestamptz)
    where l.pipeline_id = ${stage.pipelineId} and l.from_order = ${stage.from} and l.object_type = p.type
      and l.original_id = p.original_id and l.copy_id = p.copy_id`);
}
