import type { AppDeps } from '../../app/deps';
import type { DatasetSecurity } from '../../access/dataset-security/secured';
import { cacheSlot } from '../../kernel/app-caches';
import { TtlCache } from '../../kernel/ttl-cache';
import type { OpenedRollup, ServedRollup } from '../../rollups/types';
import type { CompiledQuery, WidgetQueryInput } from '../compile/types';
import type { DatasetModel } from '../compile/dataset-model';
import type { Dialect } from '../expr';
import { queryEngineFor } from '../run/engine';
import type { DatasetQueryContext } from '../run/dataset-context';
import type { ExecutableTarget } from '../run/targets';
import { divideAverages } from './averages';
import { matchRollup, type RollupPlan } from './match';
import { knownWithoutRollups, openRollup, servableRollups } from '../../rollups/serving';

/*
 * A widget read answered from a rollup of its dataset (server/query/read.ts calls this first, after securedRead):
 * the dataset's servable rollups (enabled, built, fresh: server/rollups/serving.ts), the smallest that answers the
 * request exactly under the viewer's rules (match.ts), run through the query engine (result cache keyed by the
 * rollup's load) on the rollup's DuckDB file, masked as the live answer would be. Anything that keeps a rollup from
 * answering (none matches, the file cannot be opened or read) gives null: the caller reads as before, silently.
 */

const state = cacheSlot('query.rollups', (): { enabled: boolean } => ({ enabled: true }));

/** Plans by dataset version, viewer rules, rollup loads and request (matching is pure). */
const plans = cacheSlot('query.rollupPlans', () => new TtlCache<string, RollupPlan | null>(10 * 60_000, 5_000));

/** Turns rollup reads on or off for this app (benchmarks and the property test compare both paths). */
export function setRollupReads(deps: AppDeps, enabled: boolean): void {
  deps.caches.of(state).enabled = enabled;
}

/** No rollup can answer a read of the dataset at this version, known without waiting (reads off, or none enabled). */
export function noRollupsToRead(deps: AppDeps, datasetId: number, datasetVersion: number): boolean {
  return !deps.caches.of(state).enabled || knownWithoutRollups(deps, datasetId, datasetVersion);
}

/** Whether the dataset (at this version) has rollups a read may use: reads of one that has none skip matching. */
export async function mayReadRollups(deps: AppDeps, datasetId: number, datasetVersion: number): Promise<boolean> {
  if (!deps.caches.of(state).enabled) return false;
  try {
    return (await servableRollups(deps, datasetId, datasetVersion)).length > 0;
  } catch {
    return false;
  }
}

export interface RollupRead {
  query: CompiledQuery;
  rows: unknown[][];
  truncated: boolean;
}

export async function readFromRollup(
  deps: AppDeps,
  ctx: DatasetQueryContext,
  security: DatasetSecurity,
  input: WidgetQueryInput,
): Promise<RollupRead | null> {
  if (!deps.caches.of(state).enabled) return null;
  const model = ctx.model;
  const dialect = liveDialect(ctx, model);
  let plan: RollupPlan | null;
  let opened: OpenedRollup;
  try {
    const rollups = await servableRollups(deps, model.id, model.version);
    if (rollups.length === 0) return null;
    plan = planFor(deps, security, rollups, input, dialect, model);
    if (!plan) return null;
    opened = await openRollup(deps, plan.served);
  } catch {
    return null; // the rollup cannot be opened (its file gone, storage down): read as before
  }
  const target = rollupTarget(opened);
  let result;
  try {
    result = await queryEngineFor(deps).execute(target, plan.query, model.version);
  } catch {
    return null; // the rollup's file could not answer: read as before
  }
  const rows = divideAverages(conformPeriods(result.rows, plan.periodColumns, dialect), plan.averageColumns);
  return { query: plan.query, rows: security.mask(plan.query, rows), truncated: result.truncated };
}

function planFor(
  deps: AppDeps,
  security: DatasetSecurity,
  rollups: ServedRollup[],
  input: WidgetQueryInput,
  dialect: Dialect,
  built: DatasetModel,
): RollupPlan | null {
  const model = security.model;
  const loads = rollups.map((r) => `${r.definition.id}/${r.load.id}`).join(',');
  const key = `${model.id}:${model.version}:${security.key}:${loads}:${JSON.stringify(input)}`;
  const cache = deps.caches.of(plans);
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  // The dataset's own filters (the build applied them), not the viewer's rules securedRead added to `model`.
  const plan = matchRollup(model, input, rollups, {
    builtFilterIds: new Set(built.filters.map((f) => f.id)),
    liveDialect: dialect,
  });
  cache.set(key, plan);
  return plan;
}

function rollupTarget({ connector, dataKey }: OpenedRollup): ExecutableTarget {
  return {
    dialect: 'duckdb',
    dataKey,
    run: (sql, params, opts) => connector.query(sql, params, { ...opts, readOnly: true }),
    stream: (sql, params, opts) => connector.openStream(sql, params, { ...opts, readOnly: true }),
  };
}

/** The dialect the dataset's reads run in without rollups: its extract's (DuckDB) or its first object's source. */
function liveDialect(ctx: DatasetQueryContext, model: DatasetModel): Dialect {
  return ctx.sources.dialectOf(model.objects[0]?.dataSourceId ?? 0);
}

/**
 * Period starts as the live source answers them: a timestamp at midnight for PostgreSQL and DuckDB (DATE_TRUNC), a
 * date for MySQL and ClickHouse (their truncations give DATE).
 */
export function conformPeriods(rows: unknown[][], columns: number[], dialect: Dialect): unknown[][] {
  if (columns.length === 0) return rows;
  const asTimestamp = dialect === 'postgresql' || dialect === 'duckdb';
  const conform = (v: unknown) => {
    if (typeof v !== 'string' || !/^\d{4,}-\d{2}-\d{2}/.test(v)) return v;
    const day = v.slice(0, v.indexOf('-', v.indexOf('-') + 1) + 3);
    return asTimestamp ? `${day}T00:00:00` : day;
  };
  return rows.map((row) => {
    const out = [...row];
    for (const i of columns) out[i] = conform(out[i]);
    return out;
  });
}
