import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { isPendingJobState, jobKind } from '../jobs/jobs';
import { insertNotification } from '../notifications/store';
import { exportLimits } from './limits';
import { revokeRenderTokens } from './render-token';
import { claimExportSlot, exportJobById, moveExportJob, runningExportJobIds } from './store';

/*
 * The installation's export slots (max_concurrent_jobs) and the recovery of jobs lost with a node. A job works only
 * while it holds its own session advisory lock (JobRunner.exclusive on a pooled connection of the metadata database)
 * and it goes `running` only under that lock, so a `running` job whose lock anyone else can take lost its process:
 * the node died and PostgreSQL closed its session. pg-boss runs the job of such an export again on a live worker (its
 * heartbeat went stale; EXPORT_RETRIES, bounded), and that run starts the file over (reclaimLostExport). A lost job
 * pg-boss will not run again (retries spent, or a mailing's attachment, which has no job of its own) is failed with
 * LOST_JOB_MSG by the sweep: every worker runs it each SWEEP_MS, and a waiting job runs it when the slots are full.
 */

/** The export job (POST /api/exports) as a pg-boss job; its handler is in run-job.ts. */
export const EXPORT_RUN = jobKind('export-run', z.object({ exportId: z.number().int().positive() }));

const SLOT_WAIT_MS = 500;
/** A waiting job looks for lost jobs when the slots are full, then at most this often. */
const SWEEP_EVERY_MS = 5_000;
/** How often every worker sweeps lost jobs (a lost job ends within a minute of its node's death). */
export const SWEEP_MS = 15_000;
/** A handler that finds a job's lock taken waits this long: a sweep holds it for a few queries only. */
const LOCK_WAIT_MS = 5_000;

export const LOST_JOB_MSG = 'Экспорт прерван: узел, выполнявший задание, остановился. Запустите экспорт ещё раз';

/** The key of a job's advisory lock (JobRunner.exclusive hashes it). */
export const exportLockKey = (id: number) => `export-job:${id}`;

/**
 * Runs `work` for job `id` once it holds one of the slots: queued -> running under the job's lock, held until `work`
 * ends. Answers false without running when another worker holds the job, it is no longer queued, or `signal` fired
 * while waiting.
 */
export async function runInSlot(
  deps: AppDeps,
  id: number,
  signal: AbortSignal,
  work: () => Promise<void>,
): Promise<boolean> {
  let sweptAt = 0;
  for (;;) {
    let claimed = false;
    const free = await deps.jobs.exclusive(exportLockKey(id), async () => {
      const { max_concurrent_jobs } = await exportLimits(deps);
      claimed = await claimExportSlot(deps.db, id, max_concurrent_jobs);
      if (claimed) await work();
    });
    if (!free) return false;
    if (claimed) return true;
    const row = await exportJobById(deps.db, id);
    if (!row || row.state !== 'queued' || signal.aborted) return false;
    if (Date.now() - sweptAt >= SWEEP_EVERY_MS) {
      sweptAt = Date.now();
      // A slot freed from a lost job is taken at once, without the wait.
      if ((await sweepLostExports(deps)) > 0) continue;
    }
    await sleep(SLOT_WAIT_MS, undefined, { signal }).catch(() => undefined);
  }
}

/**
 * A job of pg-boss that finds its export `running` under a free lock runs again after its node died: the export goes
 * back to queued and starts over (nothing of the lost attempt is kept). False when a live node still holds it.
 */
export async function reclaimLostExport(deps: AppDeps, id: number): Promise<boolean> {
  return deps.jobs.exclusive(
    exportLockKey(id),
    async () => {
      const back = await moveExportJob(deps.db, id, ['running'], { state: 'queued', progress: 0, error: null });
      if (back) await revokeRenderTokens(deps.db, id);
    },
    { waitMs: LOCK_WAIT_MS },
  );
}

/**
 * Fails the running jobs whose process is gone (their lock is free) and that pg-boss will not run again; answers how
 * many. Safe on several nodes.
 */
export async function sweepLostExports(deps: AppDeps): Promise<number> {
  let lost = 0;
  for (const id of await runningExportJobIds(deps.db)) {
    await deps.jobs.exclusive(exportLockKey(id), async () => {
      // pg-boss still has its job (waiting for a retry, or active on the dead node until its heartbeat runs out).
      if ((await deps.jobs.jobStatesOf(EXPORT_RUN, { exportId: id })).some(isPendingJobState)) return;
      const moved = await moveExportJob(deps.db, id, ['running'], {
        state: 'failed',
        error: LOST_JOB_MSG,
        finishedAt: new Date(),
      });
      if (!moved) return;
      lost++;
      await revokeRenderTokens(deps.db, id);
      await notifyExportOwner(deps, moved.ownerId, id, false, LOST_JOB_MSG);
    });
  }
  return lost;
}

/** The owner's notification of an export job that ended (GET /api/notifications). */
export async function notifyExportOwner(
  deps: AppDeps,
  userId: number,
  id: number,
  ok: boolean,
  message: string,
): Promise<void> {
  await insertNotification(deps.db, {
    userId,
    kind: ok ? 'export_succeeded' : 'export_failed',
    title: ok ? 'Экспорт готов' : 'Экспорт не удался',
    message,
    objectType: 'export_job',
    objectId: id,
  });
}
