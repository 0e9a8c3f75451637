import type { ExtractionRow, ExtractRunRow, RunState } from './store';

/* Wire shapes (snake_case) of runs, steps and extraction settings. */

export interface RunView {
  job_id: number;
  dataset_id: number;
  state: RunState;
  mode: 'full' | 'incremental';
  trigger: 'manual' | 'schedule';
  /** 0-100 when the source counted the rows, else null. */
  progress: number | null;
  rows_loaded: number;
  rows_total: number | null;
  error: string | null;
  user_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function runView(r: ExtractRunRow): RunView {
  const progress =
    r.state === 'succeeded'
      ? 100
      : r.rowsTotal
        ? Math.min(100, Math.floor((r.rowsLoaded / r.rowsTotal) * 100))
        : r.rowsTotal === 0
          ? 0
          : null;
  return {
    job_id: r.id,
    dataset_id: r.datasetId,
    state: r.state as RunState,
    mode: r.mode as RunView['mode'],
    trigger: r.trigger as RunView['trigger'],
    progress,
    rows_loaded: r.rowsLoaded,
    rows_total: r.rowsTotal,
    error: r.error,
    user_id: r.userId,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

export interface ExtractionView {
  dataset_id: number;
  mode: 'full' | 'incremental';
  incremental_field_id: number | null;
  schedule: string | null;
  timezone: string;
  enabled: boolean;
  /** When the schedule fires next (enabled schedules only). */
  next_run_at: string | null;
  last_run: RunView | null;
}

export function extractionView(
  datasetId: number,
  row: ExtractionRow | null,
  nextRunAt: Date | null,
  lastRun: ExtractRunRow | null,
): ExtractionView {
  return {
    dataset_id: datasetId,
    mode: (row?.mode ?? 'full') as 'full' | 'incremental',
    incremental_field_id: row?.incrementalFieldId ?? null,
    schedule: row?.schedule ?? null,
    timezone: row?.timezone ?? 'UTC',
    enabled: row?.enabled ?? false,
    next_run_at: nextRunAt?.toISOString() ?? null,
    last_run: lastRun ? runView(lastRun) : null,
  };
}
