import type { DbOrTx } from '../../db/client';
import type { DatasetField, DatasetModel } from '../query/compile/dataset-model';
import { fieldRefsById } from '../datasets/views';
import { cronProblem, isTimeZone } from '../jobs/jobs';
import { invalid, type FieldErrors } from '../kernel/errors';
import { MSG } from './messages';
import { formulaFacts, isNumeric, isTemporal } from './fields';
import type {
  Granularity,
  RollupAggregation,
  RollupDefinition,
  RollupDimension,
  RollupMeasure,
  RollupRefresh,
} from './types';
import type { RollupRow } from './store';

/*
 * A rollup definition as the API takes it (snake_case) checked against the dataset's model and turned into the
 * stored definition (server/rollups/types.ts): dimensions d0.., measure columns m<i>_<part>. Every problem is a 422
 * with the field path and a Russian message; nothing is saved unless all of it is right.
 */

export const GRANULARITIES: Granularity[] = ['day', 'week', 'month', 'quarter', 'year'];
const AGGREGATIONS: RollupAggregation[] = ['SUM', 'COUNT', 'MIN', 'MAX', 'AVG'];

/** Aggregations asked for that no rollup can hold, with why (upper-case, spaces and underscores as one). */
const NOT_ADDITIVE: Record<string, string> = {
  COUNTD: MSG.distinctWhy,
  COUNT_DISTINCT: MSG.distinctWhy,
  DISTINCT: MSG.distinctWhy,
  MEDIAN: MSG.medianWhy('медиану (MEDIAN)'),
  PERCENTILE: MSG.medianWhy('процентиль (PERCENTILE)'),
  STDEV: MSG.medianWhy('стандартное отклонение'),
  STDDEV: MSG.medianWhy('стандартное отклонение'),
  VAR: MSG.medianWhy('дисперсию'),
  VARIANCE: MSG.medianWhy('дисперсию'),
  MODE: MSG.medianWhy('моду'),
};
/** Aggregate functions a formula may use and still be re-aggregated exactly (not as a rollup's input, though). */
const ADDITIVE_FUNCTIONS = new Set(['SUM', 'COUNT', 'MIN', 'MAX']);

export interface RollupInput {
  name: string;
  dimensions: { field_id: number; granularity?: string | null }[];
  measures: { field_id: number; aggregation: string }[];
  refresh?: { mode: 'with_extract' } | { mode: 'schedule'; cron: string; timezone?: string };
  enabled?: boolean;
}

/** The columns a measure is kept in. */
export function measureColumns(i: number, aggregation: RollupAggregation): RollupMeasure['columns'] {
  switch (aggregation) {
    case 'SUM':
      return { sum: `m${i}_sum` };
    case 'COUNT':
      return { count: `m${i}_count` };
    case 'MIN':
      return { min: `m${i}_min` };
    case 'MAX':
      return { max: `m${i}_max` };
    case 'AVG':
      return { sum: `m${i}_sum`, count: `m${i}_count` };
  }
}

const label = (f: DatasetField) => f.title || f.name;

/** The stored parts of a definition, checked: 422 with every problem found. */
export async function checkRollupInput(
  db: DbOrTx,
  model: DatasetModel,
  input: RollupInput,
): Promise<{ dimensions: RollupDimension[]; measures: RollupMeasure[]; refresh: RollupRefresh }> {
  const errors: FieldErrors = {};
  const byId = new Map(model.fields.map((f) => [f.id, f]));
  const unknown = [...input.dimensions, ...input.measures].map((x) => x.field_id).filter((id) => !byId.has(id));
  const elsewhere = await fieldRefsById(db, unknown);
  const fieldOf = (id: number, path: string): DatasetField | null => {
    const f = byId.get(id);
    if (f) return f;
    const other = elsewhere.get(id);
    errors[path] = other ? MSG.otherDatasetField(id, other.datasetId) : MSG.unknownField(id);
    return null;
  };

  const dimensions: RollupDimension[] = [];
  const dimKeys = new Set<string>();
  input.dimensions.forEach((d, i) => {
    const path = `dimensions[${i}]`;
    const f = fieldOf(d.field_id, `${path}.field_id`);
    const g = d.granularity ?? null;
    let granularity: Granularity | null = null;
    if (g !== null) {
      if (!GRANULARITIES.includes(g as Granularity)) errors[`${path}.granularity`] = MSG.unknownGranularity(g);
      else if (f && !isTemporal(f)) errors[`${path}.granularity`] = MSG.granularityNotDate(label(f));
      else granularity = g as Granularity;
    }
    if (!f) return;
    const facts = formulaFacts(model, f);
    if (facts.aggregates.length) errors[`${path}.field_id`] = MSG.aggregatingDimension(label(f));
    else if (facts.parameter) errors[`${path}.field_id`] = MSG.formulaParameter(label(f));
    const key = `${f.id}:${granularity}`;
    if (dimKeys.has(key)) errors[`${path}.field_id`] = MSG.duplicateDimension(label(f));
    dimKeys.add(key);
    dimensions.push({ fieldId: f.id, granularity, column: `d${dimensions.length}` });
  });

  const measures: RollupMeasure[] = [];
  const measureKeys = new Set<string>();
  // A rollup of dimensions alone still counts its groups' rows (COUNT() of a widget).
  if (input.measures.length === 0 && input.dimensions.length === 0) errors.measures = MSG.noMeasures;
  input.measures.forEach((m, i) => {
    const path = `measures[${i}]`;
    const f = fieldOf(m.field_id, `${path}.field_id`);
    const asked = m.aggregation
      .trim()
      .toUpperCase()
      .replace(/[\s-]+/g, '_');
    const name = f ? label(f) : `id ${m.field_id}`;
    if (NOT_ADDITIVE[asked]) {
      errors[`${path}.aggregation`] = MSG.notAdditive(name, NOT_ADDITIVE[asked]);
      return;
    }
    if (!AGGREGATIONS.includes(asked as RollupAggregation)) {
      errors[`${path}.aggregation`] = MSG.unknownAggregation(m.aggregation);
      return;
    }
    if (!f) return;
    const aggregation = asked as RollupAggregation;
    const facts = formulaFacts(model, f);
    if (facts.aggregates.length) {
      const odd = facts.aggregates.filter((a) => !ADDITIVE_FUNCTIONS.has(a));
      const why = odd.some((a) => a === 'COUNTD')
        ? MSG.distinctWhy
        : MSG.formulaAggregates(facts.aggregates.join(', '));
      errors[`${path}.field_id`] = MSG.notAdditive(name, why);
      return;
    }
    if (facts.parameter) {
      errors[`${path}.field_id`] = MSG.formulaParameter(name);
      return;
    }
    if ((aggregation === 'SUM' || aggregation === 'AVG') && !isNumeric(f)) {
      errors[`${path}.aggregation`] = MSG.notNumeric(name, aggregation);
      return;
    }
    const key = `${f.id}:${aggregation}`;
    if (measureKeys.has(key)) errors[`${path}.field_id`] = MSG.duplicateMeasure(name, aggregation);
    measureKeys.add(key);
    measures.push({ fieldId: f.id, aggregation, columns: measureColumns(measures.length, aggregation) });
  });

  let refresh: RollupRefresh = { mode: 'with_extract' };
  const r = input.refresh;
  if (r?.mode === 'schedule') {
    const cron = r.cron.trim();
    const timezone = r.timezone ?? 'UTC';
    const problem = cron ? cronProblem(cron) : MSG.cronNeeded;
    if (problem) errors['refresh.cron'] = problem;
    if (!isTimeZone(timezone)) errors['refresh.timezone'] = MSG.unknownTimezone(timezone);
    refresh = { mode: 'schedule', cron, timezone };
  } else if (model.live) errors['refresh.mode'] = MSG.liveWithExtract;

  if (Object.keys(errors).length) throw invalid(errors);
  return { dimensions, measures, refresh };
}

/** The stored row as the definition the build and the read side use. */
export function definitionOf(row: RollupRow): RollupDefinition {
  return {
    id: row.id,
    datasetId: row.datasetId,
    name: row.name,
    enabled: row.enabled,
    dimensions: row.dimensions as RollupDimension[],
    measures: row.measures as RollupMeasure[],
    refresh:
      row.refreshMode === 'schedule'
        ? { mode: 'schedule', cron: row.cron ?? '', timezone: row.timezone }
        : { mode: 'with_extract' },
  };
}

/** What a built table holds: its dimensions and measures in order (jsonb keeps no key order, so not its JSON). */
export const shapeOf = (d: RollupDefinition) =>
  [
    ...d.dimensions.map((x) => `d:${x.fieldId}:${x.granularity}:${x.column}`),
    ...d.measures.map((x) => `m:${x.fieldId}:${x.aggregation}`),
  ].join('|');
