/**
 * Rollups: small pre-aggregations of a dataset kept beside its extracts (DuckDB files in storage).
 * These types are the seam between the definition/build side (server/rollups) and the read side
 * (server/query/rollups), which matches widget queries against them.
 */
import type { Connector } from '../../adapters/sources';
import type { Dialect } from '../query/expr';

export type Granularity = 'day' | 'week' | 'month' | 'quarter' | 'year';
export type RollupAggregation = 'SUM' | 'COUNT' | 'MIN' | 'MAX' | 'AVG';

/** A grouping column of the rollup: `column` is 'd0', 'd1', … in definition order. */
export interface RollupDimension {
  fieldId: number;
  granularity: Granularity | null;
  column: string;
}

/**
 * A measure: a dataset field (a column field or a calculated field that does not aggregate itself)
 * with an additive aggregation. Columns: SUM → {sum:'m0_sum'}; COUNT → {count:'m0_count'} (COUNT of
 * non-null values); MIN → {min}; MAX → {max}; AVG → {sum, count} (answered as SUM(sum)/SUM(count)).
 */
export interface RollupMeasure {
  fieldId: number;
  aggregation: RollupAggregation;
  columns: { sum?: string; count?: string; min?: string; max?: string };
}

export type RollupRefresh = { mode: 'with_extract' } | { mode: 'schedule'; cron: string; timezone: string };

export interface RollupDefinition {
  id: number;
  datasetId: number;
  name: string;
  enabled: boolean;
  dimensions: RollupDimension[];
  measures: RollupMeasure[];
  refresh: RollupRefresh;
}

export interface RollupLoad {
  id: string;
  datasetVersion: number;
  extractLoadId: string | null;
  rows: number;
  bytes: number;
  builtAt: Date;
}

export interface ServedRollup {
  definition: RollupDefinition;
  load: RollupLoad;
}

/** What openRollup gives: the DuckDB connector over the rollup file and the result-cache data key. */
export interface OpenedRollup {
  /** The same read-only DuckDB connector server/etl/open-load.ts gives extracts. */
  connector: Connector;
  /** `rollup:<rollupId>:<loadId>` */
  dataKey: string;
}

/** The table every rollup file holds. */
export const ROLLUP_TABLE = 'rollup';

/** Every rollup counts the rows of each group (COUNT() of a widget is answered as their sum). */
export const ROWS_COLUMN = 'n';

/** A field type kept as text (VARCHAR) in a rollup. */
export const isTextType = (t: string) => t === 'string' || t === 'unknown';

/**
 * Sources that compare and order text byte by byte, as DuckDB does: rollups of their datasets need no ranks.
 * (PostgreSQL orders by the column's collation, MySQL's mostly ignore case.)
 */
export const ordersTextAsBytes = (d: Dialect) => d === 'clickhouse' || d === 'duckdb';

/**
 * A text dimension's position in the source's own order of its values (DENSE_RANK at the source, NULL for NULL):
 * the rollup orders by it, because DuckDB compares text byte by byte and the source by its collation. Kept only for
 * sources that do not order as bytes.
 */
export const rankColumn = (d: RollupDimension) => `${d.column}_rank`;
