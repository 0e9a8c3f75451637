import { setTimeout as sleep } from 'node:timers/promises';
import type { AppDeps } from '../app/deps';
import { insertNotification } from '../notifications/store';
import { exportLimits } from './limits';
import { revokeRenderTokens } from './render-token';
import { claimExportSlot, exportJobById, moveExportJob, runningExportJobIds } from './store';

/*
 * The installation's export slots (max_concurrent_jobs) and the recovery of slots lost with a node. A job works only
 * while it holds its own session advisory lock (JobRunner.exclusive on a pooled connection of the metadata database)
 * and it goes `running` only under that lock, so a `running` job whose lock anyone else can take lost its process:
 * the node crashed and PostgreSQL closed its session. Such a job is failed when a waiting job finds the slots full
 * and when the jobs start on a node, so it never keeps its slot forever.
 */

const SLOT_WAIT_MS = 500;
/** A waiting job looks for lost jobs when the slots are full, then at most this often. */
const SWEEP_EVERY_MS = 5_000;

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

/** Fails the running jobs whose process is gone (their lock is free); answers how many. Safe on several nodes. */
export async function sweepLostExports(deps: AppDeps): Promise<number> {
  let lost = 0;
  for (const id of await runningExportJobIds(deps.db)) {
    await deps.jobs.exclusive(exportLockKey(id), async () => {
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
