import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { Viewer } from '../access/viewer';
import { actorOfUser } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { StorageNotFoundError } from '../storage/object-storage';
import { ExportLimitError, exportLimits, LIMIT_MSG } from './limits';
import { renderToFile } from './render-file';
import type { ParameterValues } from '../query/compile/types';
import type { ExportFilter } from './filters';

export type { ExportFilter } from './filters';
import { widgetRows } from './widget-rows';
import { writeCsv, writeXlsx } from './write-table';

/*
 * One exported file of a widget or dashboard, read with the owner's rights, row- and column-level security. The
 * export job (POST /api/exports) and mailings' attachments both call produceExport; the file is written in the data
 * directory's exports/ folder and the caller owns it from then on. A job's file is then moved into storage under
 * exports/<job id>/<file> (filePath is that key), so any node serves the download and the expiry sweep of any node
 * deletes it; a mailing's file stays local (the same node sends and removes it).
 */

export type ExportFormat = 'csv' | 'xlsx' | 'pdf' | 'png';

export type ExportObjectType = 'widget' | 'dashboard';

export interface ExportSpec {
  ownerUserId: number;
  objectType: ExportObjectType;
  objectId: number;
  format: ExportFormat;
  filters?: ExportFilter[];
  parameters?: ParameterValues;
  /** A system administrator's export as another user (POST /api/exports view_as_user_id): that user's rights. */
  viewAsUserId?: number;
  signal?: AbortSignal;
  /** The export job that runs this (render tokens are bound to it); mailings run none: a job row is made for them. */
  exportJobId?: number;
  onProgress?: (percent: number) => void;
}
export interface ExportedFile {
  /** A job's storage key (exports/<job id>/<file>), or a mailing's local file. */
  filePath: string;
  fileName: string;
  contentType: string;
  size: number;
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
  png: 'image/png',
};

/** Where a job's or a mailing's files live until they expire. */
const exportsDir = (deps: Pick<AppDeps, 'config'>) => path.join(deps.config.dataDir, 'exports');

/** A file name a user recognises: the object's name (no path separators or control characters) and the format. */
function fileNameOf(name: string, format: ExportFormat): string {
  // eslint-disable-next-line no-control-regex
  const clean =
    name
      .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]+/g, ' ')
      .trim()
      .slice(0, 120) || 'export';
  return `${clean}.${format}`;
}

export async function viewerFor(
  deps: AppDeps,
  spec: Pick<ExportSpec, 'ownerUserId' | 'viewAsUserId'>,
): Promise<Viewer> {
  const owner = await actorOfUser(deps, spec.ownerUserId);
  if (!owner) throw new Error(`Пользователь не найден (id ${spec.ownerUserId})`);
  if (spec.viewAsUserId === undefined || spec.viewAsUserId === spec.ownerUserId)
    return { actor: owner, requestedBy: owner, reason: 'self' };
  const viewed = await actorOfUser(deps, spec.viewAsUserId);
  if (!viewed) throw new Error(`Пользователь не найден (id ${spec.viewAsUserId})`);
  return { actor: viewed, requestedBy: owner, reason: 'view-as' };
}

export async function produceExport(deps: AppDeps, spec: ExportSpec): Promise<ExportedFile> {
  const limits = await exportLimits(deps);
  const viewer = await viewerFor(deps, spec);
  const dir = exportsDir(deps);
  await mkdir(dir, { recursive: true });
  const filePath = path.join(dir, `${randomUUID()}.${spec.format}`);
  // The job's time limit: the reads and the drawing stop when it fires, and the job fails naming timeout_seconds.
  const timeout = AbortSignal.timeout(limits.timeout_seconds * 1000);
  const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
  try {
    let name: string;
    if (spec.format === 'csv' || spec.format === 'xlsx') {
      if (spec.objectType !== 'widget')
        throw new Error('Экспорт дашборда в CSV и XLSX не поддерживается: выберите виджет или формат PDF, PNG');
      const source = await widgetRows(deps, viewer, spec.objectId, spec);
      name = source.name;
      const write = spec.format === 'csv' ? writeCsv : writeXlsx;
      await write(filePath, source, {
        limits,
        signal,
        onRows: (n) => spec.onProgress?.(Math.min(99, Math.floor((n / Math.max(1, limits.max_rows)) * 100))),
      });
    } else {
      name = await renderToFile(deps, viewer, spec, limits, filePath, signal);
    }
    if (timeout.aborted) throw new ExportLimitError(LIMIT_MSG.timeout(limits.timeout_seconds));
    const { size } = await stat(filePath);
    // CSV and XLSX stop writing at the limit (write-table.ts); Chromium writes a PDF or PNG whole, checked here.
    if (size > limits.max_file_size_mb * 1024 * 1024)
      throw new ExportLimitError(LIMIT_MSG.size(limits.max_file_size_mb));
    const stored = spec.exportJobId === undefined ? filePath : await storeJobFile(deps, spec.exportJobId, filePath);
    return { filePath: stored, fileName: fileNameOf(name, spec.format), contentType: CONTENT_TYPES[spec.format], size };
  } catch (e) {
    await rm(filePath, { force: true });
    if (timeout.aborted && !spec.signal?.aborted) throw new ExportLimitError(LIMIT_MSG.timeout(limits.timeout_seconds));
    throw e;
  }
}

/** Moves a job's finished file into storage (the local one goes either way); answers its key. */
async function storeJobFile(deps: AppDeps, jobId: number, file: string): Promise<string> {
  const key = `exports/${jobId}/${path.basename(file)}`;
  try {
    await deps.storage.putFile(key, file);
  } finally {
    await rm(file, { force: true });
  }
  return key;
}

/*
 * A job row's filePath is a storage key (relative); rows written before storage hold the absolute path of a file in
 * this node's DATA_DIR/exports, still read and deleted there.
 */
const isLegacyPath = (filePath: string) => path.isAbsolute(filePath);

/** The bytes of a job's file, or null when it is gone (expired and swept, or lost). */
export async function openExportFile(deps: AppDeps, filePath: string): Promise<Readable | null> {
  if (isLegacyPath(filePath)) {
    const found = await stat(filePath).catch(() => null);
    return found?.isFile() ? createReadStream(filePath) : null;
  }
  try {
    return await deps.storage.get(filePath);
  } catch (e) {
    if (e instanceof StorageNotFoundError) return null;
    throw e;
  }
}

/** Deletes a job's file: its object in storage (or an old local file). */
export async function removeExportFile(deps: AppDeps, filePath: string): Promise<void> {
  if (isLegacyPath(filePath)) await rm(filePath, { force: true });
  else await deps.storage.delete(filePath);
}
