import { rm } from 'node:fs/promises';
import { z } from 'zod';
import type { AppDeps } from '../app/deps';
import { jobKind, type JobContext, type JobKind } from '../jobs/jobs';
import type { FilterSpec, ParameterValues } from '../query/compile/types';
import { produceExport, type ExportFormat, type ExportObjectType } from './produce';
import { notifyExportOwner, runInSlot, sweepLostExports } from './slots';
import { expiredExportFiles, exportJobById, forgetExportFile, moveExportJob } from './store';

/*
 * The export job (POST /api/exports) as a pg-boss job: queued -> running -> succeeded | failed | cancelled. A job
 * waits for one of the installation's slots (max_concurrent_jobs), produces the file under its owner's (or the viewed
 * user's) rights, keeps it FILE_TTL_HOURS and notifies its owner. Every ten minutes one node removes expired files.
 */

export const EXPORT_RUN = jobKind('export-run', z.object({ exportId: z.number().int().positive() }));
const EXPORT_CLEANUP = jobKind('export-cleanup', z.object({}));

const FILE_TTL_HOURS = 24;

export function exportJobKinds(deps: AppDeps): JobKind<never>[] {
  const run: JobKind<{ exportId: number }> = {
    ...EXPORT_RUN,
    concurrency: 4,
    handler: (p, ctx) => runExport(deps, p.exportId, ctx),
  };
  const cleanup: JobKind<object> = {
    ...EXPORT_CLEANUP,
    concurrency: 1,
    handler: () => cleanExpiredExports(deps),
  };
  return [run, cleanup] as unknown as JobKind<never>[];
}

/** Once the jobs run on a node: jobs lost while every node was down give their slots back, then the cleanup. */
export async function startExportJobs(deps: AppDeps): Promise<void> {
  await sweepLostExports(deps);
  await deps.jobs.schedule(EXPORT_CLEANUP, 'exports', '*/10 * * * *', 'UTC', {});
}

async function runExport(deps: AppDeps, id: number, ctx: JobContext): Promise<void> {
  await runInSlot(deps, id, ctx.signal, () => produceJob(deps, id, ctx));
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
    if (!done) return void (await rm(file.filePath, { force: true }));
    await notifyExportOwner(deps, job.ownerId, id, true, `Файл ${file.fileName} готов к скачиванию`);
  } catch (e) {
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
    await rm(f.filePath, { force: true });
    await forgetExportFile(deps.db, f.id);
  }
}
