import { z } from 'zod';
import type { ExportLimits } from '../../server/file-export/limits';
import { entityId, parameterValues, widgetFilter, type Mirrors } from '../common';

/* Wire shapes of file export jobs and limits (/api/exports, /api/exports/{jobId}, /api/exports/limits). */

const id = entityId();

export const startExportInput = z.strictObject({
  object_type: z.enum(['widget', 'dashboard']),
  object_id: id,
  format: z.enum(['csv', 'xlsx', 'pdf', 'png']),
  filters: z.array(widgetFilter).max(100).optional(),
  parameters: parameterValues.optional(),
  view_as_user_id: id.optional().describe('API only, system administrator only: export as this user'),
});

export const startExportOutput = z.object({
  job_id: z.number().int().describe('Poll GET /api/exports/{jobId}'),
});

export const exportJobRef = z.strictObject({ jobId: id.describe('Export job id') });

export const exportJobOutput = z.object({
  job_id: z.number().int(),
  object_type: z.string(),
  object_id: z.number().int(),
  format: z.string(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  progress: z.number().int().describe('0-100'),
  file_name: z.string().nullable(),
  size: z.number().int().nullable(),
  error: z.string().nullable().describe('Why the job failed (a limit is named: max_rows, timeout_seconds...)'),
  created_at: z.string(),
  finished_at: z.string().nullable(),
  expires_at: z.string().nullable().describe('The file is removed after this time'),
});

const limit = (max: number) => z.number().int().min(1).max(max);
export const exportLimitsOutput = z.object({
  max_rows: z.number().int(),
  max_pages: z.number().int(),
  max_file_size_mb: z.number().int(),
  timeout_seconds: z.number().int(),
  max_concurrent_jobs: z.number().int(),
});
export const exportLimitsInput = z.strictObject({
  max_rows: limit(100_000_000).optional(),
  max_pages: limit(10_000).optional(),
  max_file_size_mb: limit(100_000).optional(),
  timeout_seconds: limit(86_400).optional(),
  max_concurrent_jobs: limit(100).optional(),
});

const _limits: Mirrors<ExportLimits, z.output<typeof exportLimitsOutput>> = true;
void _limits;
