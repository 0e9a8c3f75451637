import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { AppError } from '../kernel/errors';
import { readSetting, writeSetting } from '../service/store';

/*
 * Export limits: GET /api/exports/limits (any user), PUT /api/exports/limits (system administrator; API-only setting).
 * Kept in the settings table under one key; every export job reads them when it starts and fails naming the limit
 * it went over.
 */

export interface ExportLimits {
  max_rows: number;
  max_pages: number;
  max_file_size_mb: number;
  timeout_seconds: number;
  max_concurrent_jobs: number;
}

const KEY = 'export_limits';

const DEFAULTS: ExportLimits = {
  max_rows: 1_000_000,
  max_pages: 50,
  max_file_size_mb: 200,
  timeout_seconds: 600,
  max_concurrent_jobs: 2,
};

export async function exportLimits(deps: Pick<AppDeps, 'db'>): Promise<ExportLimits> {
  return { ...DEFAULTS, ...(await readSetting<Partial<ExportLimits>>(deps.db, KEY)) };
}

export async function updateExportLimits(
  deps: Pick<AppDeps, 'db'>,
  actor: Actor,
  input: Partial<ExportLimits>,
): Promise<ExportLimits> {
  if (!actor.isSysadmin) throw new AppError('forbidden');
  const next = { ...(await exportLimits(deps)), ...input };
  await writeSetting(deps.db, KEY, next);
  return next;
}

/** Messages of a job that went over a limit: each names the limit (the field of GET /api/exports/limits). */
export const LIMIT_MSG = {
  rows: (max: number) => `Превышен лимит экспорта max_rows: больше ${max} строк`,
  pages: (max: number) => `Превышен лимит экспорта max_pages: больше ${max} страниц`,
  size: (max: number) => `Превышен лимит экспорта max_file_size_mb: файл больше ${max} МБ`,
  timeout: (max: number) => `Превышен лимит экспорта timeout_seconds: экспорт дольше ${max} с`,
};

/** A job that went over a limit (its message is the job's error). */
export class ExportLimitError extends Error {}
