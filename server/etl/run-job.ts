import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import type { AppDeps } from '../app/deps';
import { ConnectorError, sourceKindInfo, type SourceKind } from '../../adapters/sources';
import { assertSourcesUsable } from '../access/source-rights';
import { connectorForSource, loadDataSourceRow, type DataSourceRow } from '../data-sources/connection';
import { loadDatasetModel, loadDatasetRow } from '../datasets/load-model';
import { materialisedAmong } from '../datasets/views';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import { insertNotification } from '../notifications/store';
import { EXTRACTS_DIR, extractFileOwner } from './etl';
import { EXTRACT_RUN, EXTRACT_SCHEDULE } from './kinds';
import { MSG } from './messages';
import { pullExtract } from './pull';
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
 * worker writes nothing more. The user who started it (the dataset's author for a scheduled run) is notified when it
 * succeeds or fails.
 */

export { EXTRACT_RUN, EXTRACT_SCHEDULE };
/** Every minute on one node: runs that lost their process are failed (see sweepLostRuns). */
const EXTRACT_SWEEP = jobKind('extract-sweep', z.object({}));

const HEARTBEAT_MS = 1_000;
/** A running run without a heartbeat this long lost its process. */
const STALE_MS = 30_000;
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

  try {
    rows = await pull(deps, run, controller.signal, onStep, (n, t) => {
      rows = n;
      total = t;
    });
    clearInterval(timer);
    await beating;
    await settle(
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
    );
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
  }
}

async function pull(
  deps: AppDeps,
  run: ExtractRunRow,
  signal: AbortSignal,
  onStep: (message: string) => Promise<void>,
  onProgress: (rows: number, total: number | null) => void,
): Promise<number> {
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
  return pullExtract({
    model,
    sourceOf: (id) => {
      const row = sources.get(id)!;
      return { connector: connectorForSource(deps, row), dialect: sourceKindInfo(row.type as SourceKind).dialect };
    },
    mode: run.mode as 'full' | 'incremental',
    incremental,
    runId: run.id,
    dataDir: deps.config.dataDir,
    signal,
    onStep,
    onProgress,
  });
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
 */
async function settle(
  deps: AppDeps,
  runId: number,
  change: Partial<ExtractRunRow> & { state: 'succeeded' | 'failed' | 'cancelled' },
  message: string,
  notice?: 'extract_succeeded' | 'extract_failed',
  from: RunState = 'running',
): Promise<ExtractRunRow | null> {
  return deps.db.transaction(async (tx) => {
    const moved = await moveRun(tx, runId, [from], change);
    if (!moved) return null;
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

/** Once the jobs run on a node: the sweep now (runs lost while every node was down) and every minute after. */
export async function startExtractJobs(deps: AppDeps): Promise<void> {
  await sweepLostRuns(deps);
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
 * Runs whose process died mid-pull are failed (their previous extract stays), runs queued whose job will never start
 * them are failed (they would refuse every manual start of the dataset), partial files of runs no longer running
 * are removed, and so are the extracts of datasets deleted or back on their source (a delete whose own removal missed
 * a file, a workspace deleted with its datasets, a run that finished after its dataset went). Called when the jobs
 * start on a node and every minute after; safe on several nodes at once.
 */
async function sweepLostRuns(deps: AppDeps): Promise<void> {
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
    } else if (served.has(owner)) continue;
    await rm(path.join(dir, name), { force: true });
  }
  for (const id of owners) if (!served.has(id)) await deps.connectors.release(`extract:${id}`).catch(() => undefined);
}
