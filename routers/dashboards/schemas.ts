import { z } from 'zod';
import { FILTER_OPS } from '../../server/query/expr/filters';
import { DASHBOARD_SORT_FIELDS } from '../../server/dashboards/dashboards';
import type { DashboardCopyInput, DashboardInput, DashboardUpdate } from '../../server/dashboards/dashboards';
import type { DashboardLayout } from '../../server/dashboards/layout';
import type { DashboardData, DashboardDataRequest } from '../../server/dashboards/data';
import { widgetDataOutput } from '../widgets/schemas';
import type { DashboardDetails, DashboardSchemaView, DashboardView } from '../../server/dashboards/views';
import {
  entityId,
  nonBlank,
  pageSchema,
  savedDashboardLayout,
  stdListQuery,
  wireString,
  type Accepts,
  type Mirrors,
} from '../common';

const id = entityId();
const ownId = nonBlank(200);
const coordinate = z.number().int().min(0).max(100_000);
const extent = z.number().int().min(1).max(100_000);
const scalar = z.union([wireString().max(10_000), z.number(), z.boolean(), z.null()]);
const drivenWidgets = z.array(id).max(1_000).default([]).describe('Widgets of this dashboard it drives');

// ---- dashboard ----

const description = wireString().max(4_000);
export const createDashboardInput = z.strictObject({
  name: nonBlank(200),
  description: description.optional(),
  workspace_id: id,
});
export const updateDashboardInput = z.strictObject({
  id,
  name: nonBlank(200),
  description: description.optional().describe('Kept when left out'),
});
export const copyDashboardInput = z.strictObject({
  id,
  name: nonBlank(200).optional().describe('Default: the original name with «(копия)»'),
  workspace_id: id.optional().describe("Default: the original's workspace"),
  copy_widgets: z.boolean().default(false).describe("Clone the tiles' widgets too; the copy shows the clones"),
});

export const dashboardView = z.object({
  id: z.number().int(),
  uuid: z.string(),
  name: z.string(),
  description: z.string(),
  workspace_id: z.number().int(),
  author_id: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const dashboardDetails = dashboardView.extend({
  widget_ids: z.array(z.number().int()).describe('Widgets the layout shows'),
});

// Dashboards have no kind: the std list without `type`.
const { type: _noKind, ...listQuery } = stdListQuery(DASHBOARD_SORT_FIELDS, z.never());
void _noKind;
export const listDashboardsInput = z.strictObject(listQuery);
export const listDashboardsOutput = pageSchema(dashboardView);

// ---- layout ----

const tab = z.strictObject({ id: ownId, name: nonBlank(200) });
const item = z.strictObject({
  widget_id: id,
  tab_id: ownId.nullable().default(null).describe('A tab id; null (or left out) when the dashboard has no tabs'),
  x: coordinate,
  y: coordinate,
  w: extent,
  h: extent,
});
const selector = z.strictObject({
  id: ownId,
  name: nonBlank(200),
  field_id: id.describe('The dataset field the control filters on'),
  op: z.enum(FILTER_OPS).default('in'),
  values: z.array(scalar).max(10_000).default([]).describe('Saved (default) values'),
  widget_ids: drivenWidgets,
});
const parameter = z.strictObject({
  name: nonBlank(500).describe('A dataset parameter of the driven widgets'),
  value: scalar,
  widget_ids: drivenWidgets,
});
const layoutFields = {
  tabs: z.array(tab).max(100).default([]),
  items: z.array(item).max(1_000).default([]),
  selectors: z.array(selector).max(200).default([]),
  parameters: z.array(parameter).max(200).default([]),
};
export const saveDashboardSchemaInput = z.strictObject({ id, ...layoutFields });

export const dashboardSchemaView = z.object({ id: z.number().int(), ...savedDashboardLayout, updated_at: z.string() });

// The server takes exactly what the bodies carry, and its views are what the outputs describe.
const _create: Mirrors<DashboardInput, z.output<typeof createDashboardInput>> = true;
const _update: Mirrors<DashboardUpdate, Omit<z.output<typeof updateDashboardInput>, 'id'>> = true;
const _copy: Mirrors<DashboardCopyInput, Omit<z.output<typeof copyDashboardInput>, 'id'>> = true;
const _layout: Accepts<DashboardLayout, Omit<z.output<typeof saveDashboardSchemaInput>, 'id'>> = true;
const _layoutKeys: Mirrors<
  keyof DashboardLayout,
  Exclude<keyof z.output<typeof saveDashboardSchemaInput>, 'id'>
> = true;
const _view: Accepts<z.output<typeof dashboardView>, DashboardView> = true;
const _details: Accepts<z.output<typeof dashboardDetails>, DashboardDetails> = true;
const _schema: Accepts<z.output<typeof dashboardSchemaView>, DashboardSchemaView> = true;
void [_create, _update, _copy, _layout, _layoutKeys, _view, _details, _schema];

// ---- data of several widgets ----

export const dashboardDataInput = z.strictObject({
  id,
  widget_ids: z.array(id).max(1_000).default([]).describe('Widgets of the layout to read; empty: all of them'),
  filters: z
    .array(
      z.strictObject({
        selector_id: ownId,
        values: z.array(scalar).max(10_000).describe("Replace the selector's saved values; empty clears it"),
      }),
    )
    .max(200)
    .default([]),
  parameters: z
    .record(wireString().max(500), scalar)
    .optional()
    .describe('Dashboard parameter name to value, for the widgets the parameter drives'),
  view_as_user_id: id.optional().describe('API only, system administrator only: read as this user'),
});

const errorBody = z.object({
  code: z.number().int(),
  message: z.string(),
  errors: z.record(z.string(), z.string()).optional(),
});
export const dashboardDataOutput = z.object({
  widgets: z.array(
    z.union([
      z.object({ widget_id: z.number().int(), data: widgetDataOutput }),
      z.object({ widget_id: z.number().int(), error: errorBody.describe('The error envelope this widget alone got') }),
    ]),
  ),
});

const _dataBody: Mirrors<DashboardDataRequest, Omit<z.output<typeof dashboardDataInput>, 'id'>> = true;
const _dataOut: Accepts<z.output<typeof dashboardDataOutput>, DashboardData> = true;
void [_dataBody, _dataOut];
