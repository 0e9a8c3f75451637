import { z } from 'zod';
import { MAX_FIELD_VALUES, MAX_PREVIEW_ROWS } from '../../server/query/compile/compile-dataset';
import {
  datasetFieldValues,
  datasetPreview,
  type DatasetPreviewInput,
  type FieldValuesInput,
} from '../../server/datasets/data';
import { authedProcedure } from '../trpc';
import { entityId, parameterValues, widgetFilter, wireString, type Accepts, type Mirrors } from '../common';

/*
 * GET /api/dataset/{id}/field-values and POST /api/dataset/{id}/preview read data (server/query/read.ts), so they live
 * apart from the schema procedures; router.ts spreads them into the `dataset` router (dataset.fieldValues, .preview).
 */

const id = entityId();
const tags = ['Datasets'];

const fieldValuesInput = z.strictObject({
  id,
  fieldId: id.describe('The field whose distinct values are listed'),
  query: wireString().max(200).optional().describe('Case-insensitive search in the value text'),
  limit: z.number().int().min(1).max(MAX_FIELD_VALUES).default(100),
  viewAsUserId: id.optional(),
});
export const fieldValuesOutput = z.object({
  field_id: z.number().int(),
  values: z.array(z.unknown()),
  has_more: z.boolean(),
});

const datasetPreviewInput = z.strictObject({
  id,
  field_ids: z.array(id).max(500).optional().describe('Fields to show; all visible fields by default'),
  filters: z.array(widgetFilter).max(200).optional(),
  parameters: parameterValues.optional(),
  limit: z.number().int().min(1).max(MAX_PREVIEW_ROWS).default(100),
  view_as_user_id: id.optional().describe('API only, system administrator only: read as this user'),
});
export const datasetPreviewOutput = z.object({
  columns: z.array(
    z.object({ field_id: z.number().int(), name: z.string(), title: z.string(), primitive_type: z.string() }),
  ),
  rows: z.array(z.array(z.unknown())),
  has_more: z.boolean(),
});

/*
 * Both hand their input without the path id to the server (server/datasets/data.ts). The preview's filters are
 * the query engine's FilterSpec, wider than `widgetFilter` because it also carries saved filters (common.ts checks
 * that it takes what the schema lets through); everything else is the same, and so are the keys.
 */
type PreviewBody = Omit<z.output<typeof datasetPreviewInput>, 'id'>;
const _fieldValues: Mirrors<FieldValuesInput, Omit<z.output<typeof fieldValuesInput>, 'id'>> = true;
const _preview: Accepts<DatasetPreviewInput, PreviewBody> = true;
const _previewRest: Mirrors<Omit<DatasetPreviewInput, 'filters'>, Omit<PreviewBody, 'filters'>> = true;
const _previewKeys: Mirrors<keyof DatasetPreviewInput, keyof PreviewBody> = true;
void [_fieldValues, _preview, _previewRest, _previewKeys];

export const datasetDataProcedures = {
  fieldValues: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/field-values',
        summary: 'Distinct values of a field for filters',
        tags,
      },
    })
    .input(fieldValuesInput)
    .output(fieldValuesOutput)
    .query(({ ctx, input: { id: datasetId, ...rest } }) => datasetFieldValues(ctx.deps, ctx.actor, datasetId, rest)),

  preview: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/dataset/{id}/preview', summary: 'Preview rows of the dataset', tags },
    })
    .input(datasetPreviewInput)
    .output(datasetPreviewOutput)
    .mutation(({ ctx, input: { id: datasetId, ...rest } }) => datasetPreview(ctx.deps, ctx.actor, datasetId, rest)),
};
