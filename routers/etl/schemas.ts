import { z } from 'zod';
import type { ExtractionInput } from '../../server/etl/settings';
import type { ExtractionView, RunView } from '../../server/etl/views';
import { RUN_SORT_FIELDS, STEP_SORT_FIELDS } from '../../server/etl/runs';
import { entityId, pagedQueryOver, pageSchema, wireString, type Mirrors } from '../common';

/* Wire shapes of extraction settings and ETL runs (/api/dataset/{id}/extraction, /api/datasets/{id}/extracts, /api/etl-jobs/...). */

const id = entityId();
const mode = z.enum(['full', 'incremental']);

export const runOutput = z.object({
  job_id: z.number().int().describe('The run id: poll GET /api/etl-jobs/{jobId}'),
  dataset_id: z.number().int(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  mode,
  trigger: z.enum(['manual', 'schedule']),
  progress: z.number().int().nullable().describe('0-100 when the source counted the rows'),
  rows_loaded: z.number().int(),
  rows_total: z.number().int().nullable(),
  error: z.string().nullable(),
  user_id: z.number().int().nullable().describe('Who started it; null for a scheduled run'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export const runPage = pageSchema(runOutput);

export const historyPage = pageSchema(z.object({ at: z.string(), state: z.string(), message: z.string() }));

export const extractionInput = z.strictObject({
  id,
  mode: mode.default('full'),
  incremental_field_id: id
    .nullable()
    .default(null)
    .describe('Incremental mode: rows above the extract maximum of this field are added'),
  schedule: wireString()
    .max(200)
    .nullable()
    .default(null)
    .describe('Cron, five fields (minute hour day month weekday); null: no schedule'),
  timezone: wireString().max(64).default('UTC').describe('IANA time zone of the schedule'),
  enabled: z.boolean().default(false).describe('Run on the schedule'),
});

export const extractionOutput = z.object({
  dataset_id: z.number().int(),
  mode,
  incremental_field_id: z.number().int().nullable(),
  schedule: z.string().nullable(),
  timezone: z.string(),
  enabled: z.boolean(),
  next_run_at: z.string().nullable(),
  last_run: runOutput.nullable(),
});

export const startInput = z.strictObject({ id, mode: mode.optional().describe('Default: the extraction settings') });
export const datasetPaged = z.strictObject({ id, ...pagedQueryOver(RUN_SORT_FIELDS) });
export const jobRef = z.strictObject({ jobId: id.describe('ETL run id') });
export const jobPaged = z.strictObject({ jobId: id.describe('ETL run id'), ...pagedQueryOver(STEP_SORT_FIELDS) });

const _in: Mirrors<ExtractionInput, Omit<z.output<typeof extractionInput>, 'id'>> = true;
const _out: Mirrors<ExtractionView, z.output<typeof extractionOutput>> = true;
const _run: Mirrors<RunView, z.output<typeof runOutput>> = true;
void [_in, _out, _run];
