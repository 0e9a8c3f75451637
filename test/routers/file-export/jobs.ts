import { expect } from 'vitest';
import type { z } from 'zod';
import type { exportJobOutput, exportLimitsOutput, startExportOutput } from '../../../routers/file-export/schemas';
import { ok, type Rest } from '../../support/rest';

export type ExportJob = z.output<typeof exportJobOutput>;
export type ExportLimitsView = z.output<typeof exportLimitsOutput>;

/** The limits an installation starts with (GET /api/exports/limits before any PUT). */
export const DEFAULT_LIMITS: ExportLimitsView = {
  max_rows: 1_000_000,
  max_pages: 50,
  max_file_size_mb: 200,
  timeout_seconds: 600,
  max_concurrent_jobs: 2,
};

/** Starts an export through POST /api/exports; answers the job id. */
export async function startExport(api: Rest, token: string, body: Record<string, unknown>): Promise<number> {
  const res = await api.post('/api/exports', body, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return ok<z.output<typeof startExportOutput>>(res).job_id;
}

/** Polls GET /api/exports/{jobId} until the job ended. */
export async function waitExport(api: Rest, token: string, jobId: number, deadlineMs = 120_000): Promise<ExportJob> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const job = ok<ExportJob>(await api.get(`/api/exports/${jobId}`, token));
    if (!['queued', 'running'].includes(job.state)) return job;
    if (Date.now() > deadline) throw new Error(`export ${jobId} still ${job.state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts an export through POST /api/exports and waits until the job ended. */
export async function runExport(
  api: Rest,
  token: string,
  body: Record<string, unknown>,
  deadlineMs?: number,
): Promise<ExportJob> {
  return waitExport(api, token, await startExport(api, token, body), deadlineMs);
}

/** PUT /api/exports/limits as a system administrator. */
export async function putLimits(api: Rest, sysadmin: string, limits: Partial<ExportLimitsView>): Promise<void> {
  ok(await api.put('/api/exports/limits', limits, sysadmin));
}
