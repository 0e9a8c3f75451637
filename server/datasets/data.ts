import { viewerOf } from '../access/viewer';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import type { FilterSpec, ParameterValues } from '../query/compile/types';
import { readData } from '../query/read';
import { readableObject } from '../access/object-access';

/*
 * Reads of a dataset's data that are not widgets: the distinct values of a field for filter pickers
 * (GET /api/dataset/{id}/field-values) and a preview of rows (POST /api/dataset/{id}/preview). Any reader of the
 * dataset's workspace may run them; they read through the one entry point (server/query/read.ts) like widget data.
 */

export interface FieldValuesInput {
  fieldId: number;
  query?: string;
  limit: number;
  viewAsUserId?: number;
}

export async function datasetFieldValues(deps: AppDeps, actor: Actor, datasetId: number, input: FieldValuesInput) {
  const viewer = await viewerOf(deps, actor, input.viewAsUserId);
  const { row } = await readableObject(deps.db, viewer.actor, 'dataset', datasetId);
  const { rows } = await readData(deps, viewer, row, {
    kind: 'field-values',
    fieldId: input.fieldId,
    query: input.query,
    limit: input.limit,
  });
  return {
    field_id: input.fieldId,
    values: rows.slice(0, input.limit).map((r) => r[0] ?? null),
    has_more: rows.length > input.limit,
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
  const viewer = await viewerOf(deps, actor, input.view_as_user_id);
  const { row } = await readableObject(deps.db, viewer.actor, 'dataset', datasetId);
  const { model, query, rows } = await readData(deps, viewer, row, {
    kind: 'preview',
    fieldIds: input.field_ids,
    filters: input.filters,
    parameters: input.parameters,
    limit: input.limit,
  });
  const fields = new Map(model.fields.map((f) => [String(f.id), f]));
  return {
    columns: query.columns.map((c) => {
      const f = fields.get(c.key)!;
      return { field_id: f.id, name: f.name, title: f.title, primitive_type: f.primitiveType };
    }),
    rows: rows.slice(0, input.limit),
    has_more: rows.length > input.limit,
  };
}
