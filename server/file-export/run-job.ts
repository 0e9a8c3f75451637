import { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import type { FilterSpec, ParameterValues } from '../query/compile/types';
import { produceExport, removeExportFile, type ExportFormat, type ExportObjectType } from './produce';
import { EXPORT_RUN, notifyExportOwner, reclaimLostExport, runInSlot, SWEEP_MS, sweepLostExports } from './slots';
import { expiredExportFiles, exportJobById, forgetExportFile, moveExportJob } from './store';

/*
 * The export job (POST /api/exports) as a pg-boss job: queued -> running -> succeeded | failed | cancelled. A job
 * waits for one of the installation's slots (max_concurrent_jobs), produces the file under its owner's (or the viewed
 * user's) rights, keeps it FILE_TTL_HOURS and notifies its owner. Every ten minutes one node removes expired files.
 * A job lost with its node (died, or stopped with SIGTERM) re-runs on another worker up to EXPORT_RETRIES times
 * (server/file-export/slots.ts), then is failed by the sweep.
 */

export { EXPORT_RUN };
const EXPORT_CLEANUP = jobKind('export-cleanup', z.object({}));

const FILE_TTL_HOURS = 24;
/** Times pg-boss runs an export again after its node died or stopped: an export that kills its node ends. */
const EXPORT_RETRIES = 3;

export function exportJobKinds(deps: AppDeps): JobKind<never>[] {
  const run: JobKind<{ exportId: number }> = {
    ...EXPORT_RUN,
    concurrency: 4,
    retryLimit: EXPORT_RETRIES,
    handler: (p, ctx) => runExport(deps, p.exportId, ctx),
  };
  const cleanup: JobKind<object> = {
    ...EXPORT_CLEANUP,
    concurrency: 1,
    handler: () => cleanExpiredExports(deps),
  };
  return [run, cleanup] as unknown as JobKind<never>[];
}

/**
 * Once the jobs run on a node (only where they run): the sweep of lost jobs now and every SWEEP_MS (jobs lost while
 * every node was down, or with another node, give their slots back), then the cleanup's schedule.
 */
export async function startExportJobs(deps: AppDeps): Promise<void> {
  deps.jobs.every('export-sweep', SWEEP_MS, async () => void (await sweepLostExports(deps)));
  await deps.jobs.schedule(EXPORT_CLEANUP, 'exports', '*/10 * * * *', 'UTC', {});
}

async function runExport(deps: AppDeps, id: number, ctx: JobContext): Promise<void> {
  // pg-boss runs this job again when its node died mid-export: the export, left running, starts over.
  const row = await exportJobById(deps.db, id);
  if (row?.state === 'running' && !(await reclaimLostExport(deps, id))) return; // a live node still makes it
  await runInSlot(deps, id, ctx.signal, () => produceJob(deps, id, ctx));
  // This node stops before the file is made: the job fails, so that pg-boss gives it to another worker.
  const now = ctx.nodeStopping() ? await exportJobById(deps.db, id) : undefined;
  if (now?.state === 'queued' || now?.state === 'running') throw new Error(`export ${id} left for another node`);
}

/** The job's file, once it holds a slot (state running); its outcome is recorded and its owner notified. */
async function produceJob(deps: AppDeps, id: number, ctx: JobContext): Promise<void> {
  const job = (await exportJobById(deps.db, id))!;
  let last = 0;
  try {
    const file = await produceExport(deps, {
      ownerUserId: job.ownerId,
      viewAsUserId: job.viewAsUserId ?? undefined,
      objectType: job.objectType as ExportObjectType,
      objectId: job.objectId,
      format: job.format as ExportFormat,
      filters: job.filters as FilterSpec[],
      parameters: job.parameters as ParameterValues,
      signal: ctx.signal,
      exportJobId: id,
      onProgress: (p) => {
        if (p - last < 5) return;
        last = p;
        void moveExportJob(deps.db, id, ['running'], { progress: p }).catch(() => undefined);
      },
    });
    const done = await moveExportJob(deps.db, id, ['running'], {
      state: 'succeeded',
      progress: 100,
      filePath: file.filePath,
      fileName: file.fileName,
      size: file.size,
      finishedAt: new Date(),
      expiresAt: new Date(Date.now() + FILE_TTL_HOURS * 3600_000),
    });
    if (!done) return void (await removeExportFile(deps, file.filePath));
    await notifyExportOwner(deps, job.ownerId, id, true, `Файл ${file.fileName} готов к скачиванию`);
  } catch (e) {
    // The node stops (not a cancel): the export stays running, and another worker runs it again (runExport).
    if (ctx.nodeStopping()) return;
    const message = e instanceof Error ? e.message : String(e);
    const failed = await moveExportJob(deps.db, id, ['running'], {
      state: ctx.signal.aborted ? 'cancelled' : 'failed',
      error: message,
      finishedAt: new Date(),
    });
    if (failed?.state === 'failed') await notifyExportOwner(deps, job.ownerId, id, false, message);
  }
}

/** Removes expired files (the periodic job, and GET /api/exports/{jobId}/file before it answers). */
export async function cleanExpiredExports(deps: AppDeps): Promise<void> {
  for (const f of await expiredExportFiles(deps.db, new Date())) {
    await removeExportFile(deps, f.filePath);
    await forgetExportFile(deps.db, f.id);
  }
}
