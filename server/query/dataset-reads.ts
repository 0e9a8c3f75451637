import type { Actor } from '../auth/actor';
import { readableDataset } from '../datasets/access';
import type { AppDeps } from '../app/deps';
import { compileFieldValuesQuery, compilePreviewQuery } from './compile/compile-dataset';
import { compileAndRun, datasetQueryContext } from './run/dataset-context';
import type { FilterSpec, ParameterValues } from './compile/types';
import { checkViewAs } from '../access/viewer';

/*
 * Reads of a dataset's data that are not widgets: the distinct values of a field (filter pickers, #31) and a
 * preview of rows (#32). Any reader of the dataset's workspace may run them; row-level security will apply here
 * as in widget data.
 */

export interface FieldValuesInput {
  fieldId: number;
  query?: string;
  limit: number;
}

export async function datasetFieldValues(deps: AppDeps, actor: Actor, datasetId: number, input: FieldValuesInput) {
  const { row } = await readableDataset(deps.db, actor, datasetId);
  const ctx = await datasetQueryContext(deps, row);
  const { result } = await compileAndRun(deps, ctx, (dialectOf) =>
    compileFieldValuesQuery(ctx.model, { fieldId: input.fieldId, query: input.query, limit: input.limit }, dialectOf),
  );
  return {
    field_id: input.fieldId,
    values: result.rows.slice(0, input.limit).map((r) => r[0] ?? null),
    has_more: result.rows.length > input.limit,
  };
}

export interface DatasetPreviewInput {
  field_ids?: number[];
  filters?: FilterSpec[];
  parameters?: ParameterValues;
  limit: number;
  view_as_user_id?: number;
}

export async function datasetPreview(deps: AppDeps, actor: Actor, datasetId: number, input: DatasetPreviewInput) {
  const { row } = await readableDataset(deps.db, actor, datasetId);
  await checkViewAs(deps.db, actor, input.view_as_user_id);
  const ctx = await datasetQueryContext(deps, row);
  const { query, result } = await compileAndRun(deps, ctx, (dialectOf) =>
    compilePreviewQuery(ctx.model, { fieldIds: input.field_ids, filters: input.filters, parameters: input.parameters, limit: input.limit }, dialectOf),
  );
  const fields = new Map(ctx.model.fields.map((f) => [String(f.id), f]));
  return {
    columns: query.columns.map((c) => {
      const f = fields.get(c.key)!;
      return { field_id: f.id, name: f.name, title: f.title, primitive_type: f.primitiveType };
    }),
    rows: result.rows.slice(0, input.limit),
    has_more: result.rows.length > input.limit,
  };
}
