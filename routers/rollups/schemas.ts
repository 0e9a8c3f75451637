import { z } from 'zod';
import type { RollupInput } from '../../server/rollups/rollups';
import { BUILD_SORT_FIELDS, BUILD_STEP_SORT_FIELDS } from '../../server/rollups/rollups';
import type { BuildView, RollupView } from '../../server/rollups/views';
import type { SuggestAnswer } from '../../server/rollups/suggest';
import { entityId, nonBlank, pagedQueryOver, pageSchema, wireString, type Mirrors } from '../common';

/* Wire shapes of rollups (/api/dataset/{id}/rollups...). */

const id = entityId();
const granularity = z.enum(['day', 'week', 'month', 'quarter', 'year']);
const aggregation = z.enum(['SUM', 'COUNT', 'MIN', 'MAX', 'AVG']);

const dimensionInput = z.strictObject({
  field_id: entityId().describe('A field of this dataset'),
  granularity: wireString()
    .max(40)
    .nullable()
    .optional()
    .describe('Date and datetime fields: day, week, month, quarter or year (the start of the period is kept)'),
});
const measureInput = z.strictObject({
  field_id: entityId().describe('A field of this dataset (a column or a calculated field that does not aggregate)'),
  aggregation: wireString()
    .max(40)
    .describe('SUM, COUNT, MIN, MAX or AVG (kept as SUM and COUNT); COUNT DISTINCT and MEDIAN do not add up'),
});
const refreshInput = z.discriminatedUnion('mode', [
  z.strictObject({
    mode: z.literal('with_extract').describe("Built after each successful run of the dataset's extract"),
  }),
  z.strictObject({
    mode: z.literal('schedule'),
    cron: wireString().max(200).describe('Cron, five fields (minute hour day month weekday)'),
    timezone: wireString().max(64).optional().describe('IANA time zone of the schedule; default UTC'),
  }),
]);

const body = {
  name: nonBlank(200),
  dimensions: z.array(dimensionInput).max(32),
  measures: z.array(measureInput).max(64),
  refresh: refreshInput.optional().describe('Default: with the extract runs (materialised datasets)'),
  enabled: z.boolean().optional().describe('Default true; a disabled rollup answers no read'),
};

export const rollupRef = z.strictObject({ id, rollupId: id.describe('Rollup id') });
export const createInput = z.strictObject({ id, ...body });
export const replaceInput = z.strictObject({ id, rollupId: id.describe('Rollup id'), ...body });

export const buildOutput = z.object({
  build_id: z.number().int(),
  rollup_id: z.number().int(),
  dataset_id: z.number().int(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  trigger: z.enum(['manual', 'schedule', 'extract']),
  rows: z.number().int().nullable(),
  error: z.string().nullable(),
  user_id: z.number().int().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});

const columnsOutput = z.object({
  sum: z.string().optional(),
  count: z.string().optional(),
  min: z.string().optional(),
  max: z.string().optional(),
});

export const rollupOutput = z.object({
  id: z.number().int(),
  dataset_id: z.number().int(),
  name: z.string(),
  dimensions: z.array(
    z.object({ field_id: z.number().int(), granularity: granularity.nullable(), column: z.string() }),
  ),
  measures: z.array(z.object({ field_id: z.number().int(), aggregation, columns: columnsOutput })),
  refresh: z.object({
    mode: z.enum(['with_extract', 'schedule']),
    cron: z.string().nullable(),
    timezone: z.string().nullable(),
  }),
  enabled: z.boolean(),
  author_id: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_build: buildOutput.nullable(),
  rows: z.number().int().nullable().describe('Rows of the current build; null before the first'),
  bytes: z.number().int().nullable(),
  built_at: z.string().nullable(),
  fresh: z.boolean().describe('Built from the dataset as it is now: reads may be answered from it'),
});
export const rollupList = z.array(rollupOutput);

export const buildsPaged = z.strictObject({
  id,
  rollupId: id.describe('Rollup id'),
  ...pagedQueryOver(BUILD_SORT_FIELDS),
});
export const buildPage = pageSchema(buildOutput);
export const buildRef = z.strictObject({ id, rollupId: id.describe('Rollup id'), buildId: id.describe('Build id') });
export const historyPaged = z.strictObject({
  id,
  rollupId: id.describe('Rollup id'),
  buildId: id.describe('Build id'),
  ...pagedQueryOver(BUILD_STEP_SORT_FIELDS),
});
export const historyPage = pageSchema(z.object({ at: z.string(), state: z.string(), message: z.string() }));

export const suggestOutput = z.object({
  suggestions: z.array(
    z.object({
      name: z.string(),
      dimensions: z.array(z.object({ field_id: z.number().int(), granularity: granularity.nullable() })),
      measures: z.array(z.object({ field_id: z.number().int(), aggregation })),
      widgets: z.array(z.number().int()).describe('The saved widgets it would answer'),
      dashboards: z.array(z.number().int()).describe('The dashboards those widgets are on'),
      widget_count: z.number().int(),
      estimated_rows: z.number().int(),
    }),
  ),
  not_served: z
    .array(z.object({ widget_id: z.number().int(), reason: z.string() }))
    .describe('Widgets of the dataset no rollup can answer, with why'),
});

const _in: Mirrors<RollupInput, Omit<z.output<typeof createInput>, 'id'>> = true;
const _out: Mirrors<RollupView, z.output<typeof rollupOutput>> = true;
const _build: Mirrors<BuildView, z.output<typeof buildOutput>> = true;
const _suggest: Mirrors<SuggestAnswer, z.output<typeof suggestOutput>> = true;
void [_in, _out, _build, _suggest];
