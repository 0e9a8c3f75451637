import { setTimeout as sleep } from 'node:timers/promises';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject, readableObject } from '../access/object-access';
import { isUniqueViolation } from '../kernel/db-errors';
import { invalid } from '../kernel/errors';
import { pageOf, type PageRequest } from '../kernel/paging';
import { loadDatasetRow, lockDatasetForShare } from '../datasets/load-model';
import { datasetNotFound } from '../datasets/messages';
import { MSG } from './messages';
import { EXTRACT_RUN, EXTRACT_SCHEDULE } from './kinds';
import { activeRunOf, addStep, extractionOf, insertRun, moveRun, runById, runsOfDataset, stepsOfRun } from './store';
import { runView, type RunView } from './views';

/*
 * Extract runs over REST: GET/POST /api/datasets/{id}/extracts, GET /api/etl-jobs/{jobId},
 * GET /api/etl-jobs/{jobId}/history, POST /api/etl-jobs/{jobId}/cancel. A run is read by whoever can read its
 * dataset; started and cancelled by the dataset's owner. job_id is the run's own id (an integer, like every id of
 * the API); the pg-boss job behind it is an implementation detail.
 */

/** What GET /api/datasets/{id}/extracts sorts by (names of its answer); newest first when not asked. */
export const RUN_SORT_FIELDS = [
  'job_id',
  'state',
  'mode',
  'trigger',
  'created_at',
  'started_at',
  'finished_at',
] as const;
/** What GET /api/etl-jobs/{jobId}/history sorts by; in the order the steps happened when not asked. */
export const STEP_SORT_FIELDS = ['at', 'state'] as const;

export async function listExtracts(deps: AppDeps, actor: Actor, datasetId: number, page: PageRequest) {
  await readableObject(deps.db, actor, 'dataset', datasetId);
  const { rows, total } = await runsOfDataset(deps.db, datasetId, page);
  return pageOf(rows.map(runView), page, total);
}

export async function startExtract(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  input: { mode?: 'full' | 'incremental' },
): Promise<RunView> {
  const { row } = await ownedObject(deps.db, actor, 'dataset', datasetId);
  if (row.live) throw MSG.liveDataset(datasetId);
  return queueRun(deps, datasetId, actor.userId, 'manual', input.mode);
}

/** A scheduled run (the pg-boss schedule of PUT /api/dataset/{id}/extraction): skipped while one is active. */
export async function startScheduledExtract(deps: AppDeps, datasetId: number): Promise<void> {
  const row = await loadDatasetRow(deps.db, datasetId).catch(() => null);
  const settings = await extractionOf(deps.db, datasetId);
  // The dataset was deleted (its settings went with it): its schedule goes too.
  if (!row) return deps.jobs.unschedule(EXTRACT_SCHEDULE, `dataset-${datasetId}`);
  if (row.live || !settings?.enabled || !settings.schedule) return;
  if (await activeRunOf(deps.db, datasetId)) return;
  await queueRun(deps, datasetId, null, 'schedule', undefined).catch(() => undefined);
}

async function queueRun(
  deps: AppDeps,
  datasetId: number,
  userId: number | null,
  trigger: 'manual' | 'schedule',
  requestedMode: 'full' | 'incremental' | undefined,
): Promise<RunView> {
  const settings = await extractionOf(deps.db, datasetId);
  const mode = requestedMode ?? ((settings?.mode ?? 'full') as 'full' | 'incremental');
  if (mode === 'incremental' && !settings?.incrementalFieldId) throw invalid({ mode: MSG.noIncrementalField });
  let run;
  try {
    run = await deps.db.transaction(async (tx) => {
      // The dataset's row is locked while the run goes in: a delete or a switch to live, which lock it and end its
      // runs (endRunsOf), either committed first, and this start is refused, or waits for this run and ends it too.
      const dataset = await lockDatasetForShare(tx, datasetId);
      if (!dataset) throw datasetNotFound(datasetId);
      if (dataset.live) throw MSG.liveDataset(datasetId);
      const inserted = await insertRun(tx, { datasetId, mode, userId, trigger });
      await addStep(
        tx,
        inserted.id,
        'queued',
        trigger === 'schedule' ? 'Запуск по расписанию' : 'Запуск поставлен в очередь',
      );
      return inserted;
    });
  } catch (e) {
    // The partial unique index: one queued or running run per dataset, whichever node asks.
    if (!isUniqueViolation(e)) throw e;
    const active = await activeRunOf(deps.db, datasetId);
    throw MSG.alreadyRunning(active?.id ?? 0);
  }
  let bossJobId: string;
  try {
    bossJobId = await deps.jobs.send(EXTRACT_RUN, { runId: run.id }, { singletonKey: `dataset-${datasetId}` });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const failed = await moveRun(deps.db, run.id, ['queued'], {
      state: 'failed',
      error: reason,
      finishedAt: new Date(),
    });
    if (failed) await addStep(deps.db, run.id, 'failed', MSG.failed(reason));
    throw e;
  }
  const sent = await moveRun(deps.db, run.id, ['queued', 'running'], { bossJobId });
  if (sent) return runView(sent);
  // Ended before its job was noted (its dataset deleted or switched to live meanwhile, or it ran already): a job
  // still waiting has nothing to run and would only hold the dataset's singleton key.
  await deps.jobs.cancel(EXTRACT_RUN, bossJobId).catch(() => undefined);
  const now = await runById(deps.db, run.id);
  if (!now) throw datasetNotFound(datasetId);
  return runView(now);
}

/** The run and its dataset, as the caller may see them: 404 for a run of a dataset they cannot read. */
async function runFor(deps: AppDeps, actor: Actor, jobId: number, owner: boolean) {
  const run = await runById(deps.db, jobId);
  if (!run) throw MSG.runNotFound(jobId);
  try {
    await (owner ? ownedObject : readableObject)(deps.db, actor, 'dataset', run.datasetId);
  } catch (e) {
    if ((e as { status?: number }).status === 404) throw MSG.runNotFound(jobId);
    throw e;
  }
  return run;
}

export async function getEtlJob(deps: AppDeps, actor: Actor, jobId: number): Promise<RunView> {
  return runView(await runFor(deps, actor, jobId, false));
}

export async function etlJobHistory(deps: AppDeps, actor: Actor, jobId: number, page: PageRequest) {
  await runFor(deps, actor, jobId, false);
  const { rows, total } = await stepsOfRun(deps.db, jobId, page);
  return pageOf(
    rows.map((s) => ({ at: s.at.toISOString(), state: s.state, message: s.message })),
    page,
    total,
  );
}

/** How long a cancel waits for the running pull to stop before it answers (the run moves on its own after). */
const CANCEL_WAIT_MS = 10_000;

export async function cancelEtlJob(deps: AppDeps, actor: Actor, jobId: number): Promise<RunView> {
  const run = await runFor(deps, actor, jobId, true);
  if (run.state === 'queued') {
    // The state and its step together: whoever reads the run cancelled finds the step in its history.
    const moved = await deps.db.transaction(async (tx) => {
      const row = await moveRun(tx, jobId, ['queued'], {
        state: 'cancelled',
        cancelRequested: true,
        finishedAt: new Date(),
      });
      if (row) await addStep(tx, jobId, 'cancelled', MSG.cancelled);
      return row;
    });
    if (moved) {
      if (moved.bossJobId) await deps.jobs.cancel(EXTRACT_RUN, moved.bossJobId).catch(() => undefined);
      return runView(moved);
    }
  }
  const running = await moveRun(deps.db, jobId, ['running'], { cancelRequested: true });
  if (!running) {
    const now = (await runById(deps.db, jobId))!;
    throw MSG.finished(now.state);
  }
  await addStep(deps.db, jobId, 'running', MSG.cancelRequested);
  // This node runs it: stop now. Another node reads cancel_requested within a second.
  if (running.bossJobId) deps.jobs.abortLocal(running.bossJobId);
  const until = Date.now() + CANCEL_WAIT_MS;
  while (Date.now() < until) {
    const now = await runById(deps.db, jobId);
    if (!now || now.state !== 'running') return runView(now ?? running);
    await sleep(100);
  }
  return runView((await runById(deps.db, jobId)) ?? running);
}
