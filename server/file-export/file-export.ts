import type { Readable } from 'node:stream';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readableObject } from '../access/object-access';
import { viewerOf } from '../access/viewer';
import { invalid, notFound } from '../kernel/errors';
import { checkWholeRead } from '../query/read';
import { widgetReadOf } from '../widgets/data';
import type { FilterSpec, ParameterValues } from '../query/compile/types';
import { CONTENT_TYPES, openExportFile, type ExportFormat, type ExportObjectType } from './produce';
import { cleanExpiredExports, EXPORT_RUN } from './run-job';
import { exportJobById, insertExportJob, type ExportJobRow } from './store';

/*
 * File export jobs: POST /api/exports (any user who may read the object; view_as_user_id for system administrators
 * only), GET /api/exports/{jobId} (its owner), GET /api/exports/{jobId}/file (its owner, a raw download). Someone
 * else's job is a 404, as if it did not exist.
 */

export interface StartExportInput {
  object_type: ExportObjectType;
  object_id: number;
  format: ExportFormat;
  filters?: FilterSpec[];
  parameters?: ParameterValues;
  view_as_user_id?: number;
}

const DASHBOARD_TABLE_FORMAT = 'Дашборд выгружается в PDF или PNG; для CSV и XLSX выберите виджет';
const JOB_NOT_FOUND = (id: number) => `Задание экспорта не найдено (id ${id})`;

export async function startExport(deps: AppDeps, actor: Actor, input: StartExportInput): Promise<{ job_id: number }> {
  const viewer = await viewerOf(deps, actor, input.view_as_user_id);
  // The object must be readable by whoever the data is read as: else a 404, nothing queued.
  await readableObject(deps.db, viewer.actor, input.object_type, input.object_id);
  if (input.object_type === 'dashboard' && (input.format === 'csv' || input.format === 'xlsx'))
    throw invalid({ format: DASHBOARD_TABLE_FORMAT });
  if (input.object_type === 'widget') {
    // A filter or parameter the read would refuse is refused now, naming its field, instead of a failed job (and
    // filters of the caller's own need a reader of the widget's dataset: widgetReadOf).
    const read = await widgetReadOf(deps, viewer, input.object_id, {
      filters: input.filters,
      parameters: input.parameters,
      page: 1,
      page_size: 1,
    });
    await checkWholeRead(deps, viewer, read.dataset, { kind: 'widget', query: read.query }, read.sources);
  }
  const row = await insertExportJob(deps.db, {
    ownerId: actor.userId,
    objectType: input.object_type,
    objectId: input.object_id,
    format: input.format,
    filters: input.filters ?? [],
    parameters: input.parameters ?? {},
    viewAsUserId: input.view_as_user_id ?? null,
  });
  await deps.jobs.send(EXPORT_RUN, { exportId: row.id });
  return { job_id: row.id };
}

async function ownJob(deps: AppDeps, actor: Actor, id: number): Promise<ExportJobRow> {
  const row = await exportJobById(deps.db, id);
  if (!row || row.ownerId !== actor.userId) throw notFound(JOB_NOT_FOUND(id));
  return row;
}

function exportJobView(row: ExportJobRow) {
  return {
    job_id: row.id,
    object_type: row.objectType,
    object_id: row.objectId,
    format: row.format,
    state: row.state as 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled',
    progress: row.progress,
    file_name: row.fileName,
    size: row.size,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
  };
}

export async function getExport(deps: AppDeps, actor: Actor, id: number) {
  return exportJobView(await ownJob(deps, actor, id));
}

export async function exportFile(
  deps: AppDeps,
  actor: Actor,
  id: number,
): Promise<{ body: Readable; fileName: string; contentType: string }> {
  await cleanExpiredExports(deps);
  const row = await ownJob(deps, actor, id);
  if (row.state !== 'succeeded') throw notFound(`Файл экспорта ещё не готов (задание ${id}: ${row.state})`);
  // Streamed from storage: the node that made the file need not be the one answering.
  const body = row.filePath ? await openExportFile(deps, row.filePath) : null;
  if (!body) throw notFound(`Файл экспорта удалён по истечении срока хранения (задание ${id})`);
  return {
    body,
    fileName: row.fileName ?? `export.${row.format}`,
    contentType: CONTENT_TYPES[row.format as ExportFormat],
  };
}
