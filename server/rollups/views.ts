import type { BuildRow, BuildState, LoadRow, RollupRow } from './store';
import type { Granularity, RollupAggregation, RollupDimension, RollupMeasure } from './types';

/* Wire shapes (snake_case) of rollups and their builds. */

export interface BuildView {
  build_id: number;
  rollup_id: number;
  dataset_id: number;
  state: BuildState;
  trigger: 'manual' | 'schedule' | 'extract';
  rows: number | null;
  error: string | null;
  user_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function buildView(b: BuildRow): BuildView {
  return {
    build_id: b.id,
    rollup_id: b.rollupId,
    dataset_id: b.datasetId,
    state: b.state as BuildState,
    trigger: b.trigger as BuildView['trigger'],
    rows: b.rows,
    error: b.error,
    user_id: b.userId,
    created_at: b.createdAt.toISOString(),
    started_at: b.startedAt?.toISOString() ?? null,
    finished_at: b.finishedAt?.toISOString() ?? null,
  };
}

export interface RollupView {
  id: number;
  dataset_id: number;
  name: string;
  dimensions: { field_id: number; granularity: Granularity | null; column: string }[];
  measures: {
    field_id: number;
    aggregation: RollupAggregation;
    columns: { sum?: string; count?: string; min?: string; max?: string };
  }[];
  refresh: { mode: 'with_extract' | 'schedule'; cron: string | null; timezone: string | null };
  enabled: boolean;
  author_id: number | null;
  created_at: string;
  updated_at: string;
  last_build: BuildView | null;
  /** The current load's rows, bytes and build time; null before a first successful build. */
  rows: number | null;
  bytes: number | null;
  built_at: string | null;
  /** Built from the dataset as it is now (its version, its extract's current load): reads may use it. */
  fresh: boolean;
}

export function rollupView(row: RollupRow, load: LoadRow | null, last: BuildRow | null, fresh: boolean): RollupView {
  const schedule = row.refreshMode === 'schedule';
  return {
    id: row.id,
    dataset_id: row.datasetId,
    name: row.name,
    dimensions: (row.dimensions as RollupDimension[]).map((d) => ({
      field_id: d.fieldId,
      granularity: d.granularity,
      column: d.column,
    })),
    measures: (row.measures as RollupMeasure[]).map((m) => ({
      field_id: m.fieldId,
      aggregation: m.aggregation,
      columns: m.columns,
    })),
    refresh: {
      mode: schedule ? 'schedule' : 'with_extract',
      cron: schedule ? row.cron : null,
      timezone: schedule ? row.timezone : null,
    },
    enabled: row.enabled,
    author_id: row.authorId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_build: last ? buildView(last) : null,
    rows: load?.rows ?? null,
    bytes: load?.bytes ?? null,
    built_at: load?.builtAt.toISOString() ?? null,
    fresh,
  };
}
