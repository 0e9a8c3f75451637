import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { ownedObject, readableObject } from '../access/object-access';
import { invalid, type FieldErrors } from '../kernel/errors';
import { cronProblem, isTimeZone, nextRunAt } from '../jobs/jobs';
import { loadDatasetModel } from '../datasets/load-model';
import { MSG } from './messages';
import { EXTRACT_SCHEDULE } from './kinds';
import { extractionOf, lastRunOf, saveExtraction, type ExtractionRow } from './store';
import { extractionView, type ExtractionView } from './views';

/*
 * Extraction settings of a materialised dataset: GET /api/dataset/{id}/extraction (whoever reads the dataset),
 * PUT /api/dataset/{id}/extraction (its owner). Kept in their own table, so a pipeline deploy never carries them. An
 * enabled schedule is a pg-boss cron schedule keyed by the dataset (it fires on one node) in the given time zone.
 */

export interface ExtractionInput {
  mode: 'full' | 'incremental';
  incremental_field_id: number | null;
  schedule: string | null;
  timezone: string;
  enabled: boolean;
}

const scheduleKey = (datasetId: number) => `dataset-${datasetId}`;

function nextOf(row: ExtractionRow | null): Date | null {
  if (!row?.enabled || !row.schedule) return null;
  return nextRunAt(row.schedule, row.timezone);
}

export async function getExtraction(deps: AppDeps, actor: Actor, datasetId: number): Promise<ExtractionView> {
  const { row: dataset } = await readableObject(deps.db, actor, 'dataset', datasetId);
  if (dataset.live) throw MSG.liveDataset(datasetId);
  const row = await extractionOf(deps.db, datasetId);
  return extractionView(datasetId, row, nextOf(row), await lastRunOf(deps.db, datasetId));
}

export async function updateExtraction(
  deps: AppDeps,
  actor: Actor,
  datasetId: number,
  input: ExtractionInput,
): Promise<ExtractionView> {
  const { row: dataset } = await ownedObject(deps.db, actor, 'dataset', datasetId);
  if (dataset.live) throw MSG.liveDataset(datasetId);
  const errors: FieldErrors = {};
  if (input.incremental_field_id !== null) {
    const model = await loadDatasetModel(deps.db, datasetId);
    const field = model.fields.find((f) => f.id === input.incremental_field_id);
    if (!field) errors.incrementalFieldId = MSG.fieldNotInDataset(input.incremental_field_id);
    else if (field.kind !== 'physical' || !field.objectId) errors.incrementalFieldId = MSG.fieldNotPhysical(field.id);
  } else if (input.mode === 'incremental') errors.incrementalFieldId = MSG.noIncrementalField;
  const schedule = input.schedule?.trim() || null;
  if (schedule) {
    const problem = cronProblem(schedule);
    if (problem) errors.schedule = problem;
  } else if (input.enabled && input.schedule !== null) errors.schedule = 'Укажите расписание (cron) или schedule: null';
  if (!isTimeZone(input.timezone)) errors.timezone = MSG.unknownTimezone(input.timezone);
  if (Object.keys(errors).length) throw invalid(errors);

  const values = {
    datasetId,
    mode: input.mode,
    incrementalFieldId: input.incremental_field_id,
    schedule,
    timezone: input.timezone,
    enabled: input.enabled,
  };
  // pg-boss first: a schedule it refuses leaves the saved settings as they were. A save that fails after it puts
  // pg-boss back on the previous settings, so the row and the schedule never disagree.
  const previous = await extractionOf(deps.db, datasetId);
  await applySchedule(deps, datasetId, values);
  let row: ExtractionRow;
  try {
    row = await saveExtraction(deps.db, values);
  } catch (e) {
    await applySchedule(deps, datasetId, previous).catch(() => undefined);
    throw e;
  }
  return extractionView(datasetId, row, nextOf(row), await lastRunOf(deps.db, datasetId));
}

/** Makes pg-boss hold the settings' schedule: the cron when it is enabled, none otherwise. */
async function applySchedule(
  deps: AppDeps,
  datasetId: number,
  settings: Pick<ExtractionRow, 'enabled' | 'schedule' | 'timezone'> | null,
): Promise<void> {
  if (settings?.enabled && settings.schedule)
    await deps.jobs.schedule(EXTRACT_SCHEDULE, scheduleKey(datasetId), settings.schedule, settings.timezone, {
      datasetId,
    });
  else await deps.jobs.unschedule(EXTRACT_SCHEDULE, scheduleKey(datasetId));
}
