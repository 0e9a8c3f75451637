import type { DataSourceRow } from '../../data-sources/connection';
import { assertSourcesUsable, type DatasetOwnerRef } from '../../access/source-rights';
import type { DatasetModel } from '../compile/dataset-model';
import { loadDatasetModel, type DatasetRow } from '../../datasets/load-model';
import type { AppDeps } from '../../app/deps';
import { queryEngineFor } from './engine';
import { DatasetSources } from './targets';
import type { CompiledQuery } from '../compile/types';
import type { Dialect } from '../expr';
import { extractModelOf, openExtract } from '../../etl/etl';
import { cacheSlot } from '../../kernel/app-caches';

/*
 * What a data request needs of its dataset: the model (cached per dataset version, so a request reads no schema) and
 * its data sources (given by the caller, or read here), which the dataset must still be allowed to use.
 */

const MAX_MODELS = 500;

/** Dataset models by dataset id; an entry serves only while the dataset's version is unchanged. */
const models = cacheSlot('query.models', () => new Map<number, DatasetModel>());

/**
 * The model of a dataset row; reloaded whenever the row's version differs from the cached model's. A cached model is
 * answered as it is, not in a promise: every widget read comes here.
 */
function datasetModelOf(deps: AppDeps, row: Pick<DatasetRow, 'id' | 'version'>): DatasetModel | Promise<DatasetModel> {
  const hit = deps.caches.of(models).get(row.id);
  if (hit && hit.version === row.version) return hit;
  return loadModel(deps, row);
}

async function loadModel(deps: AppDeps, row: Pick<DatasetRow, 'id' | 'version'>): Promise<DatasetModel> {
  const cache = deps.caches.of(models);
  const model = await loadDatasetModel(deps.db, row.id);
  cache.delete(row.id);
  if (cache.size >= MAX_MODELS) cache.delete(cache.keys().next().value!);
  cache.set(row.id, model);
  return model;
}

/*
 * The sources of a model over the rows a caller read, and those its objects read, by those rows: a widget's are one
 * array while its cached read decision stands (server/widgets/widget-load.ts), so its repeated reads make neither
 * again. Both are pure functions of the rows and the model; the check that the dataset may still use them
 * (assertSourcesUsable) runs on every read.
 */
const sourcesOfRows = new WeakMap<
  DataSourceRow[],
  { model: DatasetModel; sources: DatasetSources; used: DataSourceRow[] }
>();

export interface DatasetQueryContext {
  model: DatasetModel;
  sources: DatasetSources;
}

/**
 * `sourceRows`: the dataset's data sources when the caller read them already (else they are read here). 403 when a
 * source its objects read is one the dataset may no longer use (access/source-rights.ts).
 */
export async function datasetQueryContext(
  deps: AppDeps,
  row: DatasetOwnerRef,
  sourceRows?: DataSourceRow[],
): Promise<DatasetQueryContext> {
  const cached = datasetModelOf(deps, row);
  const loaded = cached instanceof Promise ? await cached : cached;
  let known = sourceRows && sourcesOfRows.get(sourceRows);
  if (known?.model !== loaded) {
    const sources = sourceRows ? DatasetSources.of(loaded, sourceRows) : await DatasetSources.load(deps.db, loaded);
    const used = [...new Set(loaded.objects.map((o) => o.dataSourceId))].map((id) => sources.row(id));
    known = { model: loaded, sources, used };
    if (sourceRows) sourcesOfRows.set(sourceRows, known);
  }
  const { sources, used } = known;
  const deciding = assertSourcesUsable(deps, deps.db, row, used, { cached: true });
  if (deciding) await deciding;
  if (loaded.live) return { model: loaded, sources };
  // Materialised (live = false): the same model over the extract's tables, compiled for and run on DuckDB.
  const model = extractModelOf(loaded);
  return { model, sources: sources.onExtract(model, await openExtract(deps, loaded.id)) };
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
  return { query, result, dataKey: target.dataKey };
}
