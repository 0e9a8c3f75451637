import type { DataSourceRow } from '../data-sources/connection';
import type { DatasetModel } from '../datasets/model';
import { loadDatasetModel, type DatasetRow } from '../datasets/load-model';
import type { AppDeps } from '../deps';
import { queryEngineFor } from './engine';
import { DatasetSources } from './targets';
import type { CompiledQuery } from './types';
import type { Dialect } from './expr';

/*
 * What a data request needs of its dataset: the model (cached per dataset version, so a request reads one dataset
 * row instead of the whole schema) and its data sources (read per request: a changed connection applies at once).
 */

const MAX_MODELS = 500;
const models = new WeakMap<AppDeps, Map<number, DatasetModel>>();

/** The model of a dataset row; reloaded whenever the row's version differs from the cached model's. */
export async function datasetModelOf(deps: AppDeps, row: Pick<DatasetRow, 'id' | 'version'>): Promise<DatasetModel> {
  let cache = models.get(deps);
  if (!cache) models.set(deps, (cache = new Map()));
  const hit = cache.get(row.id);
  if (hit && hit.version === row.version) return hit;
  const model = await loadDatasetModel(deps.db, row.id);
  cache.delete(row.id);
  if (cache.size >= MAX_MODELS) cache.delete(cache.keys().next().value!);
  cache.set(row.id, model);
  return model;
}

export interface DatasetQueryContext {
  model: DatasetModel;
  sources: DatasetSources;
}

/** `sourceRows`: the dataset's data sources when the caller read them already (else they are read here). */
export async function datasetQueryContext(
  deps: AppDeps,
  row: Pick<DatasetRow, 'id' | 'version'>,
  sourceRows?: DataSourceRow[],
): Promise<DatasetQueryContext> {
  const model = await datasetModelOf(deps, row);
  return { model, sources: sourceRows ? DatasetSources.of(model, sourceRows) : await DatasetSources.load(deps.db, model) };
}

/** Compiles with the dialects of the dataset's sources and runs the query where its objects live. */
export async function compileAndRun(
  deps: AppDeps,
  ctx: DatasetQueryContext,
  compile: (dialectOf: (dataSourceId: number) => Dialect) => CompiledQuery,
) {
  const query = compile(ctx.sources.dialectOf);
  const target = ctx.sources.target(deps, query.dataSourceId);
  const result = await queryEngineFor(deps).execute(target, query, ctx.model.version);
  return { query, result };
}

/** A result row as an object keyed by the output columns' keys. */
export function rowObject(query: CompiledQuery, row: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  query.columns.forEach((c, i) => {
    out[c.key] = row[i] ?? null;
  });
  return out;
}
