import type { Viewer } from '../access/viewer';
import type { DatasetOwnerRef } from '../access/source-rights';
import type { DataSourceRow } from '../data-sources/connection';
import { columnGuard } from '../access/column-rules';
import { rowFiltersFor, rowFiltersKey } from '../access/row-rules';
import type { AppDeps } from '../app/deps';
import {
  compileFieldValuesQuery,
  compilePreviewQuery,
  type FieldValuesRequest,
  type PreviewRequest,
} from './compile/compile-dataset';
import { compileWidgetQuery } from './compile/compile-widget';
import type { DatasetModel } from './compile/dataset-model';
import type { CompiledQuery, WidgetQueryInput } from './compile/types';
import type { Dialect } from './expr';
import { compileAndRun, datasetQueryContext } from './run/dataset-context';

/*
 * THE one entry point for reading a dataset's data. Widget data (POST /api/widget/{id}/data), widget preview
 * (POST /api/widget/preview), dataset preview (POST /api/dataset/{id}/preview) and field values
 * (GET /api/dataset/{id}/field-values) all come here, and so will dashboards, share links, exports, mailings, render
 * pages and the assistant. The caller has already found the object through the access policy (server/access); here
 * the dataset's own right to its sources is checked, and the viewer is where row- and column-level security apply.
 */

export type ReadRequest =
  | { kind: 'widget'; query: WidgetQueryInput }
  | ({ kind: 'preview' } & PreviewRequest)
  | ({ kind: 'field-values' } & FieldValuesRequest);

export interface ReadResult {
  model: DatasetModel;
  query: CompiledQuery;
  /** The rows as the target returned them: up to one more than a request's limit, so the caller can tell has_more. */
  rows: unknown[][];
  /** The target stopped before the end (its row cap), so there may be more rows than `rows` holds. */
  truncated: boolean;
}

/**
 * `dataset`: a dataset the viewer's actor may read (found through the access policy). `sources`: its data sources
 * when the caller read them already (the widget data hot path reads them with the widget), else they are read here.
 */
export async function readData(
  deps: AppDeps,
  viewer: Viewer,
  dataset: DatasetOwnerRef,
  request: ReadRequest,
  sources?: DataSourceRow[],
): Promise<ReadResult> {
  // Row- and column-level security will narrow the compiled query by viewer.readsAs here.
  const ctx = await datasetQueryContext(deps, dataset, sources);
  // Column-level security: hidden fields are out of the model's reach, masked output columns answer the mask.
  const cls = await columnGuard(deps, viewer, ctx.model, request);
  // Row-level security: the actor's rules are filters of the model like its own (a predicate, not another query).
  const rowFilters = await rowFiltersFor(deps, viewer, ctx.model);
  const rowFiltered = rowFilters.length ? { ...cls.model, filters: [...cls.model.filters, ...rowFilters] } : cls.model;
  const { query, result } = await compileAndRun(deps, { ...ctx, model: cls.model }, (dialectOf) => {
    cls.validate(dialectOf);
    return compileRequest(deps, rowFiltered, request, dialectOf, `${cls.key}|${rowFiltersKey(rowFilters)}`);
  });
  return { model: cls.model, query, rows: cls.mask(query, result.rows), truncated: result.truncated };
}

function compileRequest(
  deps: AppDeps,
  model: DatasetModel,
  request: ReadRequest,
  dialectOf: (id: number) => Dialect,
  columnRulesKey: string,
): CompiledQuery {
  switch (request.kind) {
    case 'widget': {
      // Compiling depends on the model (its version and the viewer's column rules), the request and the sources'
      // dialects (fixed per source id) only.
      const planKey = `${model.id}:${model.version}:${columnRulesKey}:${JSON.stringify(request.query)}`;
      const cached = deps.caches.plans.get(planKey);
      if (cached) return cached;
      const compiled = compileWidgetQuery(model, request.query, dialectOf);
      deps.caches.plans.set(planKey, compiled);
      return compiled;
    }
    case 'preview':
      return compilePreviewQuery(model, request, dialectOf);
    case 'field-values':
      return compileFieldValuesQuery(model, request, dialectOf);
  }
}

/** A result row as an object keyed by the output columns' keys. */
export function rowObject(query: CompiledQuery, row: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  query.columns.forEach((c, i) => {
    out[c.key] = row[i] ?? null;
  });
  return out;
}
