import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject, readableObject } from '../access/object-access';
import { loadDatasetModel, loadDatasetRow, type DatasetRow } from '../datasets/load-model';
import { currentLoadOf } from '../etl/open-load';
import { isUniqueViolation } from '../kernel/db-errors';
import { invalid } from '../kernel/errors';
import { pageOf, type PageRequest } from '../kernel/paging';
import { ROLLUP_BUILD, ROLLUP_SCHEDULE, queueBuild, rollupBuildJobKinds, sweepLostBuilds } from './build';
import { rollupPrefixOf } from './keys';
import { checkRollupInput, definitionOf, shapeOf, type RollupInput } from './definitions';
import { MSG } from './messages';
import { isFresh, rollupsChanged } from './serving';
import { sweepRollupObjects } from './sweep';
import {
  addBuildStep,
  buildById,
  buildsOfRollup,
  currentLoadsOf,
  deleteRollup,
  dropCurrentLoad,
  insertRollup,
  lastBuildsOf,
  moveBuild,
  nameTaken,
  rollupById,
  rollupForUpdate,
  rollupsOfDataset,
  rollupsWithExtract,
  stepsOfBuild,
  updateRollup,
  type RollupRow,
} from './store';
import { buildView, rollupView, type BuildView, type RollupView } from './views';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * Rollups over REST: GET/POST /api/dataset/{id}/rollups, GET/PUT/DELETE /api/dataset/{id}/rollups/{rollupId},
 * POST .../build, GET .../builds, GET .../builds/{buildId}/history, POST .../builds/{buildId}/cancel. Read by whoever
 * can read the dataset; defined, built and cancelled by whoever may change it (its owner, as extract runs).
 */

export { type RollupInput };
export const BUILD_SORT_FIELDS = ['build_id', 'state', 'trigger', 'created_at', 'finished_at'] as const;
export const BUILD_STEP_SORT_FIELDS = ['at', 'state'] as const;

const scheduleKey = (rollupId: number) => `rollup-${rollupId}`;

async function viewsOf(deps: AppDeps, dataset: DatasetRow, rows: RollupRow[]): Promise<RollupView[]> {
  const ids = rows.map((r) => r.id);
  const [loads, last] = await Promise.all([currentLoadsOf(deps.db, ids), lastBuildsOf(deps.db, ids)]);
  const extractLoad = dataset.live ? null : await currentLoadOf(deps, dataset.id);
  return rows.map((r) => {
    const load = loads.get(r.id) ?? null;
    const fresh =
      load !== null &&
      isFresh({ definition: definitionOf(r), load: { ...load } }, dataset.version, dataset.live, extractLoad);
    return rollupView(r, load, last.get(r.id) ?? null, fresh);
  });
}

/** The rollup of the dataset: 404 when it is not one of this dataset's. */
async function rollupOf(deps: AppDeps, datasetId: number, rollupId: number): Promise<RollupRow> {
  const row = await rollupById(deps.db, rollupId);
  if (!row || row.datasetId !== datasetId) throw MSG.rollupNotFound(rollupId);
  return row;
}

export async function listRollups(deps: AppDeps, actor: Actor, datasetId: number): Promise<RollupView[]> {
  const { row } = await readableObject(deps.db, actor, 'dataset', datasetId);
  return viewsOf(deps, row as DatasetRow, await rollupsOfDataset(deps.db, datasetId));
}

export async function getRollup(deps: AppDeps, actor: Actor, datasetId: number, rollupId: number): Promise<RollupView> {
  const { row } = await readableObject(deps.db, actor, 'dataset', datasetId);
  const [view] = await viewsOf(deps, row as DatasetRow, [await rollupOf(deps, datasetId, rollupId)]);
  return view;
}

/** The pg-boss schedule of a rollup refreshed on its own cron: held while it is enabled, none otherwise. */
async function syncSchedule(deps: AppDeps, row: RollupRow | null, rollupId: number): Promise<void> {
  if (row?.enabled && row.refreshMode === 'schedule' && row.cron)
    await deps.jobs.schedule(ROLLUP_SCHEDULE, scheduleKey(rollupId), row.cron, row.timezone, { rollupId });
  else await deps.jobs.unschedule(ROLLUP_SCHEDULE, scheduleKey(rollupId));
}

async function saveRollup(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  input: RollupInput,
  rollupId: number | null,
): Promise<RollupView> {
  const { row: dataset } = await ownedObject(deps.db, actor, 'dataset', datasetId);
  if (rollupId !== null) await rollupOf(deps, datasetId, rollupId);
  const model = await loadDatasetModel(deps.db, datasetId);
  const parts = await checkRollupInput(deps.db, model, input);
  const name = input.name.trim();
  const values = {
    datasetId,
    name,
    dimensions: parts.dimensions,
    measures: parts.measures,
    refreshMode: parts.refresh.mode,
    cron: parts.refresh.mode === 'schedule' ? parts.refresh.cron : null,
    timezone: parts.refresh.mode === 'schedule' ? parts.refresh.timezone : 'UTC',
    enabled: input.enabled ?? true,
  };
  let saved: RollupRow;
  try {
    saved = await deps.db.transaction(async (tx) => {
      if (await nameTaken(tx, datasetId, name, rollupId ?? undefined)) throw invalid({ name: MSG.nameTaken(name) });
      if (rollupId === null) return insertRollup(tx, { ...values, authorId: actor.userId });
      const before = await rollupForUpdate(tx, rollupId);
      const updated = await updateRollup(tx, rollupId, values);
      if (!before || !updated) throw MSG.rollupNotFound(rollupId);
      // A load of another shape must not answer for the new definition: out of service in the same transaction.
      if (shapeOf(definitionOf(before)) !== shapeOf(definitionOf(updated))) await dropCurrentLoad(tx, rollupId);
      return updated;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw invalid({ name: MSG.nameTaken(name) });
    throw e;
  }
  await syncSchedule(deps, saved, saved.id);
  rollupsChanged(deps, datasetId);
  const [view] = await viewsOf(deps, dataset as DatasetRow, [saved]);
  return view;
}

export const createRollup = (deps: AppDeps, actor: Actor, datasetId: number, input: RollupInput) =>
  saveRollup(deps, actor, datasetId, input, null);

/** PUT: the whole definition replaced; its current build stays in service unless the dimensions or measures changed. */
export async function replaceRollup(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  rollupId: number,
  input: RollupInput,
): Promise<RollupView> {
  const view = await saveRollup(deps, actor, datasetId, input, rollupId);
  return view;
}

export async function removeRollup(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  rollupId: number,
): Promise<{ id: number; deleted: true }> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  await rollupOf(deps, datasetId, rollupId);
  // Its builds go with it (cascade): a running one finds itself gone at its next heartbeat and stops.
  if (!(await deleteRollup(deps.db, rollupId))) throw MSG.rollupNotFound(rollupId);
  rollupsChanged(deps, datasetId);
  await deps.jobs.unschedule(ROLLUP_SCHEDULE, scheduleKey(rollupId)).catch(() => undefined);
  await deps.storage.deletePrefix(`${rollupPrefixOf(datasetId)}rollup-${rollupId}/`).catch(() => undefined);
  return { id: rollupId, deleted: true };
}

export async function startBuild(deps: AppDeps, actor: Actor, datasetId: number, rollupId: number): Promise<BuildView> {
  const { row } = await ownedObject(deps.db, actor, 'dataset', datasetId);
  await rollupOf(deps, datasetId, rollupId);
  if (!(row as DatasetRow).live && !(await currentLoadOf(deps, datasetId))) throw MSG.notSynchronised(datasetId);
  return buildView(await queueBuild(deps, rollupId, datasetId, actor.userId, 'manual'));
}

export async function listBuilds(deps: AppDeps, actor: Actor, datasetId: number, rollupId: number, page: PageRequest) {
  await readableObject(deps.db, actor, 'dataset', datasetId);
  await rollupOf(deps, datasetId, rollupId);
  const { rows, total } = await buildsOfRollup(deps.db, rollupId, page);
  return pageOf(rows.map(buildView), page, total);
}

async function buildOf(deps: AppDeps, datasetId: number, rollupId: number, buildId: number) {
  await rollupOf(deps, datasetId, rollupId);
  const build = await buildById(deps.db, buildId);
  if (!build || build.rollupId !== rollupId) throw MSG.buildNotFound(buildId);
  return build;
}

export async function buildHistory(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  rollupId: number,
  buildId: number,
  page: PageRequest,
) {
  await readableObject(deps.db, actor, 'dataset', datasetId);
  await buildOf(deps, datasetId, rollupId, buildId);
  const { rows, total } = await stepsOfBuild(deps.db, buildId, page);
  return pageOf(
    rows.map((s) => ({ at: s.at.toISOString(), state: s.state, message: s.message })),
    page,
    total,
  );
}

const CANCEL_WAIT_MS = 10_000;

export async function cancelBuild(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  rollupId: number,
  buildId: number,
): Promise<BuildView> {
  await ownedObject(deps.db, actor, 'dataset', datasetId);
  const build = await buildOf(deps, datasetId, rollupId, buildId);
  if (build.state === 'queued') {
    const moved = await deps.db.transaction(async (tx) => {
      const row = await moveBuild(tx, buildId, ['queued'], {
        state: 'cancelled',
        cancelRequested: true,
        finishedAt: new Date(),
      });
      if (row) await addBuildStep(tx, buildId, 'cancelled', MSG.cancelled);
      return row;
    });
    if (moved) {
      if (moved.bossJobId) await deps.jobs.cancel(ROLLUP_BUILD, moved.bossJobId).catch(() => undefined);
      return buildView(moved);
    }
  }
  const running = await moveBuild(deps.db, buildId, ['running'], { cancelRequested: true });
  if (!running) throw MSG.finished((await buildById(deps.db, buildId))?.state ?? build.state);
  await addBuildStep(deps.db, buildId, 'running', MSG.cancelRequested);
  if (running.bossJobId) deps.jobs.abortLocal(running.bossJobId);
  const until = Date.now() + CANCEL_WAIT_MS;
  while (Date.now() < until) {
    const now = await buildById(deps.db, buildId);
    if (!now || now.state !== 'running') return buildView(now ?? running);
    await sleep(100);
  }
  return buildView((await buildById(deps.db, buildId)) ?? running);
}

/**
 * After an extract run of the dataset succeeded (server/etl/run-job.ts): its enabled rollups refreshed with the
 * extract are queued. Never fails the caller (a rollup already building keeps its build).
 */
export async function queueRollupsAfterExtract(deps: AppDeps, datasetId: number): Promise<void> {
  try {
    for (const r of await rollupsWithExtract(deps.db, datasetId))
      await queueBuild(deps, r.id, datasetId, null, 'extract').catch(() => undefined);
  } catch (e) {
    console.error(`[rollups] builds of dataset ${datasetId} not queued:`, e instanceof Error ? e.message : e);
  }
}

/** A rollup's own cron fired: a build queued unless one is active, or the rollup is gone or switched off. */
async function startScheduledBuild(deps: AppDeps, rollupId: number): Promise<void> {
  const row = await rollupById(deps.db, rollupId);
  if (!row) return deps.jobs.unschedule(ROLLUP_SCHEDULE, scheduleKey(rollupId));
  if (!row.enabled || row.refreshMode !== 'schedule') return;
  const dataset = await loadDatasetRow(deps.db, row.datasetId).catch(() => null);
  if (!dataset) return;
  if (!dataset.live && !(await currentLoadOf(deps, dataset.id))) return;
  await queueBuild(deps, rollupId, row.datasetId, null, 'schedule').catch(() => undefined);
}

/** The job kinds of rollups (registered by the app with the others). */
export const rollupJobKinds = (deps: AppDeps) => rollupBuildJobKinds(deps, (id) => startScheduledBuild(deps, id));

const SWEEP_MS = 15_000;

/** Once the jobs run on a node: lost builds failed and stale objects deleted, now and every SWEEP_MS. */
export async function startRollupJobs(deps: AppDeps): Promise<void> {
  deps.jobs.every('rollup-sweep', SWEEP_MS, async () => {
    await sweepLostBuilds(deps);
    await sweepRollupObjects(deps);
  });
}
