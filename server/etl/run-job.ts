import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { ConnectorError, sourceKindInfo, type SourceKind } from '../../adapters/sources';
import { assertSourcesUsable } from '../access/source-rights';
import { connectorForSource, loadDataSourceRow, type DataSourceRow } from '../data-sources/connection';
import { loadDatasetModel, loadDatasetRow, lockDatasetForShare } from '../datasets/load-model';
import { materialisedAmong } from '../datasets/views';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import { insertNotification } from '../notifications/store';
import { EXTRACTS_DIR, extractFileOwner } from './files';
import { EXTRACT_RUN, EXTRACT_SCHEDULE } from './kinds';
import { commitLoad, extractKeyOf, newLoadId, storeLoad } from './loads';
import { sweepExtractObjects, sweepLegacyExtract } from './load-sweep';
import { MSG } from './messages';
import { closeLoadsOf, extractLoadCommitted, holdCurrentLoad, openLoadDatasets } from './open-load';
import { pullExtract } from './pull';
import { queueRollupsAfterExtract } from '../rollups/rollups';
import {
  addRunningStep,
  addStep,
  extractionOf,
  moveRun,
  queuedRunsOlderThan,
  runById,
  staleRuns,
  type ExtractRunRow,
  type RunState,
} from './store';

/*
 * The extract run as a pg-boss job (server/jobs): queued -> running -> succeeded | failed | cancelled, each move one
 * conditional UPDATE, each logged as a step (GET /api/etl-jobs/{jobId}/history). While it pulls, the run writes its
 * progress and a heartbeat every second and reads cancel_requested, so a cancel sent to any API node stops the pull
 * (the AbortSignal cancels the query at the source). A heartbeat that finds the run no longer running (gone with its
 * dataset or workspace, cancelled by a switch to live, failed by the sweep) stops the pull the same way, and the
 * worker writes nothing more. A complete pull is stored as a new load under a new load id (server/etl/loads.ts),
 * made current in the transaction that marks the run succeeded; a failed, cancelled or lost run leaves the previous
 * load current. The user who started it (the dataset's author for a scheduled run) is notified when it succeeds or
 * fails.
 */

export { EXTRACT_RUN, EXTRACT_SCHEDULE };
/** Every minute on one node: runs that lost their process are failed (see sweepLostRuns). */
const EXTRACT_SWEEP = jobKind('extract-sweep', z.object({}));

const HEARTBEAT_MS = 1_000;
/** A running run without a heartbeat this long lost its process. */
const STALE_MS = 30_000;
/** How often every working node sweeps lost runs (JobRunner.every). */
const SWEEP_MS = 15_000;
/**
 * A queued run older than this whose pg-boss job is gone or ended never started: its send never happened (the process
 * died between the run's insert and the send, which takes milliseconds) or its job ended without the handler.
 */
const QUEUED_GRACE_MS = 60_000;
/** A queued run older than this is taken off the queue even when its job still waits: nothing queues for a day. */
const QUEUED_MAX_HOURS = 24;
/** pg-boss job states after which the handler will not run. */
const JOB_ENDED = new Set(['completed', 'cancelled', 'failed']);

/** The job kinds of this area, with their handlers bound to the app (registered in server/app/start.ts). */
export function extractJobKinds(
  deps: AppDeps,
  startScheduled: (deps: AppDeps, datasetId: number) => Promise<void>,
): JobKind<never>[] {
  const run: JobKind<{ runId: number }> = {
    ...EXTRACT_RUN,
    concurrency: 2,
    handler: (p, ctx) => runExtract(deps, p.runId, ctx),
  };
  const scheduled: JobKind<{ datasetId: number }> = {
    ...EXTRACT_SCHEDULE,
    concurrency: 1,
    handler: (p) => startScheduled(deps, p.datasetId),
  };
  const sweep: JobKind<object> = { ...EXTRACT_SWEEP, concurrency: 1, handler: () => sweepLostRuns(deps) };
  return [run, scheduled, sweep] as unknown as JobKind<never>[];
}

async function runExtract(deps: AppDeps, runId: number, ctx: JobContext): Promise<void> {
  const db = deps.db;
  const run = await moveRun(db, runId, ['queued'], {
    state: 'running',
    startedAt: new Date(),
    heartbeatAt: new Date(),
  });
  if (!run) return; // cancelled while queued, or another node took it
  if (!(await addRunningStep(db, runId, MSG.started))) return; // ended at once (its dataset deleted or made live)

  const controller = new AbortController();
  const onJobAbort = () => controller.abort(new Error('stopped'));
  ctx.signal.addEventListener('abort', onJobAbort, { once: true });
  let rows = 0;
  let total: number | null = null;
  let cancelled = false;
  /**
   * The run is no longer running, though this worker did not end it: deleted with its dataset (DELETE /api/dataset/{id},
   * DELETE /api/workspaces/{id}), cancelled by PUT /api/dataset/{id} live: true, or failed by the sweep. Whoever ended
   * it wrote its end: the pull stops, and nothing more is written.
   */
  let endedElsewhere = false;
  const endedMeanwhile = () => {
    endedElsewhere = true;
    if (!controller.signal.aborted) controller.abort(new Error('ended'));
  };
  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    const row = await moveRun(db, runId, ['running'], { rowsLoaded: rows, rowsTotal: total, heartbeatAt: new Date() });
    if (!row) endedMeanwhile();
    else if (row.cancelRequested && !controller.signal.aborted) {
      cancelled = true;
      controller.abort(new Error('cancelled'));
    }
  };
  const timer = setInterval(() => {
    beating = beating.then(beat).catch(() => undefined);
  }, HEARTBEAT_MS);
  const onStep = async (message: string) => {
    if (!(await addRunningStep(db, runId, message))) endedMeanwhile();
  };

  /** The load stored by this run, deleted again unless its success commits. */
  let stored: string | null = null;
  try {
    const pulled = await pull(deps, run, controller.signal, onStep, (n, t) => {
      rows = n;
      total = t;
    });
    rows = pulled.rows;
    const loadId = newLoadId();
    try {
      await storeLoad(deps, run.datasetId, loadId, pulled.file);
    } catch (e) {
      throw isDiskFull(e) ? e : new Error(MSG.storeFailed(failureReason(e)), { cause: e });
    }
    stored = loadId;
    controller.signal.throwIfAborted();
    clearInterval(timer);
    await beating;
    const done = await settle(
      deps,
      runId,
      {
        state: 'succeeded',
        rowsLoaded: rows,
        rowsTotal: total ?? rows,
        finishedAt: new Date(),
        heartbeatAt: new Date(),
      },
      MSG.succeeded(rows),
      'extract_succeeded',
      'running',
      { datasetId: run.datasetId, loadId },
    );
    if (done) {
      stored = null;
      extractLoadCommitted(deps, run.datasetId);
      // Rollups refreshed with the extract are built from the new load.
      await queueRollupsAfterExtract(deps, run.datasetId);
    }
  } catch (e) {
    clearInterval(timer);
    await beating;
    const current = endedElsewhere ? null : await runById(db, runId);
    // Ended elsewhere (above), or now: its end, step and notice are written already, or went with its dataset.
    if (current?.state !== 'running') return;
    cancelled ||= current.cancelRequested;
    if (cancelled) {
      await settle(deps, runId, { state: 'cancelled', rowsLoaded: rows, finishedAt: new Date() }, MSG.cancelled);
    } else {
      const reason = failureReason(e);
      await settle(
        deps,
        runId,
        { state: 'failed', rowsLoaded: rows, error: reason, finishedAt: new Date() },
        MSG.failed(reason),
        'extract_failed',
      );
    }
  } finally {
    clearInterval(timer);
    ctx.signal.removeEventListener('abort', onJobAbort);
    // Stored, but not made current (the run ended elsewhere, or its commit failed): nothing will ever read it.
    if (stored) await deps.storage.delete(extractKeyOf(run.datasetId, stored)).catch(() => undefined);
  }
}

async function pull(
  deps: AppDeps,
  run: ExtractRunRow,
  signal: AbortSignal,
  onStep: (message: string) => Promise<void>,
  onProgress: (rows: number, total: number | null) => void,
) {
  const dataset = await loadDatasetRow(deps.db, run.datasetId);
  const model = await loadDatasetModel(deps.db, run.datasetId);
  const sourceIds = [...new Set(model.objects.map((o) => o.dataSourceId))];
  const sources = new Map<number, DataSourceRow>();
  for (const id of sourceIds) sources.set(id, await loadDataSourceRow(deps.db, id));
  await assertSourcesUsable(deps, deps.db, dataset, [...sources.values()], { cached: false });

  let incremental: { objectId: number; column: string } | undefined;
  if (run.mode === 'incremental') {
    const settings = await extractionOf(deps.db, run.datasetId);
    const field = model.fields.find((f) => f.id === settings?.incrementalFieldId);
    if (!field?.objectId || !field.column) throw new Error(MSG.noIncrementalField);
    incremental = { objectId: field.objectId, column: field.column };
  }
  // An incremental run adds to a copy of the current load (held while it is copied); none yet: it loads in full.
  const previous = incremental ? await holdCurrentLoad(deps, run.datasetId) : null;
  try {
    return await pullExtract({
      model,
      sourceOf: (id) => {
        const row = sources.get(id)!;
        return { connector: connectorForSource(deps, row), dialect: sourceKindInfo(row.type as SourceKind).dialect };
      },
      mode: run.mode as 'full' | 'incremental',
      incremental,
      previousFile: previous?.file,
      runId: run.id,
      dataDir: deps.config.dataDir,
      signal,
      onStep,
      onProgress,
    });
  } finally {
    previous?.release();
  }
}

/**
 * Disk full while writing the spool or the new extract file: Node's write error (ENOSPC) or DuckDB's own ("Could not
 * write file ...: No space left on device"). Said plainly, without the server's paths.
 */
function isDiskFull(e: unknown): boolean {
  if ((e as NodeJS.ErrnoException | null)?.code === 'ENOSPC') return true;
  return e instanceof Error && /No space left on device/i.test(e.message);
}

/**
 * The source no longer has a table or column the dataset reads (renamed, dropped): PostgreSQL's SQLSTATE
 * undefined_column / undefined_table, MySQL and MariaDB errno 1054 / 1146, ClickHouse UNKNOWN_IDENTIFIER / UNKNOWN_TABLE.
 */
const SCHEMA_CHANGED = new Set(['42703', '42P01', '1054', '1146', '47', '60']);

function failureReason(e: unknown): string {
  if (isDiskFull(e)) return MSG.diskFull;
  if (e instanceof ConnectorError && e.code && SCHEMA_CHANGED.has(e.code)) return MSG.schemaChanged(e.message);
  if (e instanceof ConnectorError) return e.message;
  if (e instanceof Error && e.message) return e.message.slice(0, 2000);
  return String(e).slice(0, 2000);
}

/**
 * Ends a running run (only if it is still running, or still `from`: null when a cancel or another node ended it first), logs the step
 * and notifies its user, in one transaction: whoever reads the run's end also finds its step and its notification.
 * A success makes its `load` current in the same transaction: the run is succeeded exactly when its load is the one
 * every node reads.
 */
async function settle(
  deps: AppDeps,
  runId: number,
  change: Partial<ExtractRunRow> & { state: 'succeeded' | 'failed' | 'cancelled' },
  message: string,
  notice?: 'extract_succeeded' | 'extract_failed',
  from: RunState = 'running',
  load?: { datasetId: number; loadId: string },
): Promise<ExtractRunRow | null> {
  return deps.db.transaction(async (tx) => {
    // The dataset first, as a delete or a switch to live locks it before its runs (endRunsOf): either that committed
    // first and the run is no longer running, or it waits for this load, and then forgets it with the dataset.
    if (load && !(await lockDatasetForShare(tx, load.datasetId))) return null;
    const moved = await moveRun(tx, runId, [from], change);
    if (!moved) return null;
    if (load) await commitLoad(tx, load.datasetId, load.loadId, runId);
    await addStep(tx, runId, change.state, message);
    if (notice) await notify(tx, moved, notice, message);
    return moved;
  });
}

async function notify(db: DbOrTx, run: ExtractRunRow, kind: string, message: string): Promise<void> {
  let userId = run.userId;
  let name = `id ${run.datasetId}`;
  try {
    const dataset = await loadDatasetRow(db, run.datasetId);
    userId ??= dataset.authorId;
    name = `«${dataset.name}»`;
  } catch {
    // the dataset was deleted meanwhile: the user who started the run is still told
  }
  if (userId === null) return;
  const title =
    kind === 'extract_succeeded' ? `Датасет ${name} синхронизирован` : `Синхронизация датасета ${name} не удалась`;
  await insertNotification(db, {
    userId,
    kind,
    title,
    message,
    objectType: 'etl_job',
    objectId: run.id,
  });
}

/** Once the jobs run on a node: the sweep now (runs lost while every node was down) and every SWEEP_MS after. */
export async function startExtractJobs(deps: AppDeps): Promise<void> {
  // Now, then every SWEEP_MS on every working node: a run whose node died is failed within STALE_MS + SWEEP_MS (45 s),
  // where the per-minute schedule alone (kept, one node a minute) could take 90 s.
  deps.jobs.every('extract-sweep', SWEEP_MS, () => sweepLostRuns(deps));
  await deps.jobs.schedule(EXTRACT_SWEEP, 'sweep', '* * * * *', 'UTC', {});
}

/** Why a queued run will never start (its job was never sent, is gone, ended, or waited a day), or null. */
async function whyNeverStarted(deps: AppDeps, run: ExtractRunRow): Promise<string | null> {
  const state = run.bossJobId ? await deps.jobs.stateOf(EXTRACT_RUN, run.bossJobId) : null;
  if (state === null || JOB_ENDED.has(state)) return MSG.queuedLost;
  if (Date.now() - run.createdAt.getTime() > QUEUED_MAX_HOURS * 3_600_000) return MSG.queuedTooLong(QUEUED_MAX_HOURS);
  return null;
}

/**
 * Runs whose process died mid-pull are failed (their previous load stays current), runs queued whose job will never
 * start them are failed (they would refuse every manual start of the dataset), partial files of runs no longer
 * running are removed, and so are the extracts of datasets deleted or back on their source (a delete whose own
 * removal missed a file, a workspace deleted with its datasets, a run that finished after its dataset went), in
 * storage too (load-sweep.ts: with superseded loads past their grace). An older version's extract file is stored as
 * a load. Called when the jobs start on a node and every minute after; safe on several nodes at once.
 */
export async function sweepLostRuns(deps: AppDeps): Promise<void> {
  for (const run of await staleRuns(deps.db, STALE_MS)) {
    await settle(
      deps,
      run.id,
      { state: 'failed', error: MSG.lost, finishedAt: new Date() },
      MSG.lost,
      'extract_failed',
    );
  }
  for (const run of await queuedRunsOlderThan(deps.db, QUEUED_GRACE_MS)) {
    const reason = await whyNeverStarted(deps, run);
    if (!reason) continue;
    // Only a run still queued: one its handler took meanwhile is left to it.
    const failed = await settle(
      deps,
      run.id,
      { state: 'failed', error: reason, finishedAt: new Date() },
      reason,
      'extract_failed',
      'queued',
    );
    // A job still waiting would hold the dataset's singleton key and refuse the next run's send.
    if (failed?.bossJobId) await deps.jobs.cancel(EXTRACT_RUN, failed.bossJobId).catch(() => undefined);
  }
  const dir = path.join(deps.config.dataDir, EXTRACTS_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const owners = [...new Set(names.map(extractFileOwner).filter((id) => id !== null))];
  const served = await materialisedAmong(deps.db, owners);
  for (const name of names) {
    const owner = extractFileOwner(name);
    if (owner === null) continue;
    const part = /^dataset-\d+\.duckdb\.(\d+)\.part/.exec(name);
    if (part) {
      const run = await runById(deps.db, Number(part[1]));
      if (run?.state === 'running' || run?.state === 'queued') continue;
    } else if (served.has(owner)) {
      // An older version's extract (and its WAL): stored as a load, then removed once that load is past the grace.
      if (name === `dataset-${owner}.duckdb` && !(await sweepLegacyExtract(deps, owner, path.join(dir, name))))
        continue;
      if (name !== `dataset-${owner}.duckdb` && names.includes(`dataset-${owner}.duckdb`)) continue;
    }
    await rm(path.join(dir, name), { force: true });
  }
  await sweepExtractObjects(deps);
  // What this node still has open of datasets deleted or back on their source meanwhile.
  const open = openLoadDatasets(deps);
  const kept = await materialisedAmong(deps.db, open);
  await closeLoadsOf(
    deps,
    open.filter((id) => !kept.has(id)),
  );
}
