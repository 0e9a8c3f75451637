import { readFile } from 'node:fs/promises';
import { renderPage } from '../../adapters/render/chromium';
import { readableObject } from '../access/object-access';
import type { Viewer } from '../access/viewer';
import type { AppDeps } from '../app/deps';
import { ExportLimitError, LIMIT_MSG, type ExportLimits } from './limits';
import { issueRenderToken, RENDER_TOKEN_HEADER, revokeRenderTokens } from './render-token';
import { runInSlot } from './slots';
import { insertExportJob, moveExportJob } from './store';

/*
 * PDF and PNG of a widget or dashboard: headless Chromium opens the app's own render page
 * (GET /api/render/dashboard/{id} or /api/render/widget/{id}, ?jobId=) with a render token bound to the job and the
 * object, the page draws with the shared chart module (web/charts) and the file is printed or screenshotted. A call
 * without a job (a mailing's attachment) gets a job row of its own that takes a slot, so the token still has a
 * running job to bind to and the row tells the real outcome.
 */

/** The part of produceExport's spec a drawing needs (declared here: produce.ts imports this file). */
interface RenderSpec {
  ownerUserId: number;
  objectType: 'widget' | 'dashboard';
  objectId: number;
  format: 'csv' | 'xlsx' | 'pdf' | 'png';
  filters?: unknown[];
  parameters?: Record<string, unknown>;
  viewAsUserId?: number;
  exportJobId?: number;
}

/** Where Chromium reaches this node's HTTP server: RENDER_ORIGIN, else the port it listens on. */
const renderOrigin = (deps: AppDeps) => process.env.RENDER_ORIGIN ?? `http://127.0.0.1:${deps.config.port}`;

/** The pages of a PDF as Chromium writes them: one `/Type /Page` object per page. */
export const pdfPageCount = (pdf: Buffer) =>
  (pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;

export async function renderToFile(
  deps: AppDeps,
  viewer: Viewer,
  spec: RenderSpec,
  limits: ExportLimits,
  filePath: string,
  signal: AbortSignal,
): Promise<string> {
  const { row } = await readableObject(deps.db, viewer.actor, spec.objectType, spec.objectId);
  if (spec.exportJobId !== undefined) {
    // An export job: it already holds its slot and records its own outcome (run-job.ts).
    await drawToFile(deps, spec, spec.exportJobId, limits, filePath, signal);
    return row.name;
  }
  // A mailing's attachment: a job row of its own, which takes a slot like any export job (max_concurrent_jobs) and
  // records what really happened, so the drawing is counted, bounded, and never reported done when it failed.
  const job = await insertExportJob(deps.db, {
    ownerId: spec.ownerUserId,
    objectType: spec.objectType,
    objectId: spec.objectId,
    format: spec.format,
    filters: spec.filters ?? [],
    parameters: spec.parameters ?? {},
    viewAsUserId: spec.viewAsUserId ?? null,
  });
  try {
    const ran = await runInSlot(deps, job.id, signal, async () => {
      await drawToFile(deps, spec, job.id, limits, filePath, signal);
      await moveExportJob(deps.db, job.id, ['running'], { state: 'succeeded', progress: 100, finishedAt: new Date() });
    });
    if (!ran) throw abortError(signal, limits);
  } catch (e) {
    const error = signal.aborted ? abortError(signal, limits).message : e instanceof Error ? e.message : String(e);
    await moveExportJob(deps.db, job.id, ['queued', 'running'], { state: 'failed', error, finishedAt: new Date() });
    throw e;
  }
  return row.name;
}

/** Why a drawing stopped: the time limit (named), else the caller's own reason. */
function abortError(signal: AbortSignal, limits: ExportLimits): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError')
    return new ExportLimitError(LIMIT_MSG.timeout(limits.timeout_seconds));
  return reason instanceof Error ? reason : new Error('Экспорт отменён');
}

/** Chromium draws the render page with a token bound to job `jobId`; a PDF over max_pages fails naming it. */
async function drawToFile(
  deps: AppDeps,
  spec: RenderSpec,
  jobId: number,
  limits: ExportLimits,
  filePath: string,
  signal: AbortSignal,
): Promise<void> {
  const token = await issueRenderToken(deps.db, { id: jobId, objectType: spec.objectType, objectId: spec.objectId });
  try {
    await renderPage({
      url: `${renderOrigin(deps)}/api/render/${spec.objectType}/${spec.objectId}?jobId=${jobId}`,
      headers: { [RENDER_TOKEN_HEADER]: token },
      kind: spec.format === 'pdf' ? 'pdf' : 'png',
      out: filePath,
      timeoutMs: limits.timeout_seconds * 1000,
      width: spec.objectType === 'dashboard' ? 1200 : 900,
      signal,
    });
  } finally {
    await revokeRenderTokens(deps.db, jobId);
  }
  if (spec.format === 'pdf') {
    const pages = pdfPageCount(await readFile(filePath));
    if (pages > limits.max_pages) throw new ExportLimitError(LIMIT_MSG.pages(limits.max_pages));
  }
}
