import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../server/query/compile/types';
import { WIDGET_KINDS } from '../../server/service/dictionary';
import {
  calculatedField,
  entityId,
  nonBlank,
  pageSchema,
  parameterValues,
  savedCalculatedField,
  savedFilter,
  savedShelfField,
  savedSort,
  shelfField,
  stdListQuery,
  widgetFilter,
  widgetSort,
  wireString,
  type Accepts,
  type Mirrors,
} from '../common';
import { WIDGET_SORT_FIELDS } from '../../server/widgets/widgets';
import type { WidgetDataRequest, WidgetPreviewRequest } from '../../server/widgets/data';
import type { WidgetConfig } from '../../server/widgets/views';

const id = entityId();
const kinds = Object.keys(WIDGET_KINDS) as [string, ...string[]];
const widgetKind = z.enum(kinds).describe(`Widget kind: ${kinds.join(', ')}`);

const shelves = {
  rows: z.array(shelfField).max(100).default([]).describe('Categories'),
  series: z.array(shelfField).max(100).default([]),
  columns: z.array(shelfField).max(100).default([]).describe('Measures'),
  filters: z.array(widgetFilter).max(200).default([]),
  sorts: z.array(widgetSort).max(100).default([]),
  calculated_fields: z
    .array(calculatedField)
    .max(500)
    .default([])
    .describe('Required when a shelf references a calculated dataset field'),
};

const createFields = {
  name: nonBlank(200),
  type: widgetKind,
  dataset_id: id,
  ...shelves,
  parameters: parameterValues.optional().describe('Checked with the configuration; not saved'),
};
export const createWidgetInput = z.strictObject(createFields);
export const updateWidgetInput = z.strictObject({ id, ...createFields });

const paging = {
  page: z.number().int().min(1).max(1_000_000_000).default(1).describe('Pages from 1'),
  page_size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  view_as_user_id: id.optional().describe('API only, system administrator only: read as this user'),
  parameters: parameterValues.optional(),
};
const optionalShelves = {
  rows: shelves.rows.unwrap().optional(),
  series: shelves.series.unwrap().optional(),
  columns: shelves.columns.unwrap().optional(),
  filters: shelves.filters.unwrap().optional().describe('AND-ed with the saved filters'),
  sorts: shelves.sorts.unwrap().optional(),
  calculated_fields: shelves.calculated_fields.unwrap().optional(),
};

export const widgetDataInput = z.strictObject({
  id,
  type: widgetKind.optional(),
  ...optionalShelves,
  ...paging,
  // The specification gives create and data one body: these two are accepted and ignored here.
  name: wireString().max(200).optional(),
  dataset_id: id.optional(),
});

export const widgetPreviewInput = z.strictObject({
  dataset_id: id,
  type: widgetKind.default('table'),
  ...shelves,
  ...paging,
  name: wireString().max(200).optional(),
});

/*
 * POST /api/widget/{id}/data and POST /api/widget/preview hand their body to the server (server/widgets/data.ts),
 * without the path id and the `name` and `dataset_id` they accept and ignore. The shelf, filter, sort and calculated
 * field types are the query engine's, wider than these schemas because they also carry saved configurations (common.ts
 * checks that they take what the schemas let through); everything else is the same, and so are the keys.
 */
type ConfigKeys = keyof WidgetConfig;
type DataBody = Omit<z.output<typeof widgetDataInput>, 'id' | 'name' | 'dataset_id'>;
type PreviewBody = Omit<z.output<typeof widgetPreviewInput>, 'name'>;
const _data: Accepts<WidgetDataRequest, DataBody> = true;
const _dataRest: Mirrors<Omit<WidgetDataRequest, ConfigKeys>, Omit<DataBody, ConfigKeys>> = true;
const _dataKeys: Mirrors<keyof WidgetDataRequest, keyof DataBody> = true;
const _preview: Accepts<WidgetPreviewRequest, PreviewBody> = true;
const _previewRest: Mirrors<Omit<WidgetPreviewRequest, ConfigKeys>, Omit<PreviewBody, ConfigKeys>> = true;
const _previewKeys: Mirrors<keyof WidgetPreviewRequest, keyof PreviewBody> = true;
void [_data, _dataRest, _dataKeys, _preview, _previewRest, _previewKeys];

const dataRow = z.record(z.string(), z.unknown());
export const widgetDataOutput = z.union([
  z.object({
    kind: z.literal('flat'),
    rows: z.array(dataRow).describe('Keys are shelf field ids'),
    page: z.object({ page: z.number().int(), pageSize: z.number().int(), hasMore: z.boolean() }),
  }),
  z.object({ kind: z.literal('kpi'), row: dataRow }),
]);

export const widgetView = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  dataset_id: z.number().int(),
  workspace_id: z.number().int(),
  author_id: z.number().int().nullable(),
  rows: z.array(savedShelfField),
  series: z.array(savedShelfField),
  columns: z.array(savedShelfField),
  filters: z.array(savedFilter),
  sorts: z.array(savedSort),
  calculated_fields: z.array(savedCalculatedField),
  created_at: z.string(),
  updated_at: z.string(),
});

export const listWidgetsInput = z.strictObject({
  ...stdListQuery(WIDGET_SORT_FIELDS, widgetKind),
  datasetId: id.optional().describe('Widgets built on this dataset'),
});
export const listWidgetsOutput = pageSchema(widgetView);
