import { z } from 'zod';
import type {
  PublicDashboardView,
  PublicFieldValuesRequest,
  PublicWidgetDataRequest,
  PublicWidgetView,
} from '../../server/public-link/public-link';
import type { LinkState } from '../../server/share-links/link-access';
import { MAX_PAGE_SIZE } from '../../server/query/compile/types';
import {
  entityId,
  nonBlank,
  savedDashboardLayout,
  savedSelector,
  scalarOut,
  wireString,
  type Accepts,
  type Mirrors,
} from '../common';

/*
 * Wire shapes of the public viewer of a share link. The token is taken as any text: a malformed one is looked up no
 * further and answers the same 404 as an unknown one (a 422 would tell a guesser which tokens are well-formed).
 */

const token = z.string().max(1_000).describe('The share link token (the last segment of its url)');
const id = entityId();
// Anyone may send these bodies, so a value is bounded by what a selector offers: a field value picked from a list
// (1,000 characters is beyond any label), at most 1,000 of them (field-values' largest page), at most 200 selectors
// and parameters (a layout's most).
const scalar = z.union([wireString().max(1_000), z.number(), z.boolean(), z.null()]);
const MAX_PARAMETERS = 200;

export const tokenInput = z.strictObject({ token });
export const widgetInput = z.strictObject({ token, id: id.describe('A widget on the shared dashboard') });

export const unlockInput = z.strictObject({ token, password: z.string().min(1).max(256) });
export const unlockOutput = z.object({
  grant: z.string().describe('Send it in the X-Share-Grant header on the other viewer paths'),
  expires_at: z.string(),
});

export const linkStateOutput = z.object({
  status: z.enum(['active', 'suspended', 'expired']),
  password_required: z.boolean(),
  unlocked: z.boolean().describe('The link may be viewed now (active, and unlocked when it has a password)'),
  dashboard_name: z.string().nullable().describe('Only when the link may be viewed'),
});

export const widgetDataInput = z.strictObject({
  token,
  id,
  filters: z
    .array(
      z.strictObject({
        selector_id: nonBlank(200).describe('A selector of the dashboard that drives this widget'),
        values: z.array(scalar).max(1_000),
      }),
    )
    .max(200)
    .default([])
    .describe("Values of the dashboard's selectors (the only filters a viewer can set)"),
  parameters: z
    .record(wireString().max(500), scalar)
    .refine((p) => Object.keys(p).length <= MAX_PARAMETERS, `size must be at most ${MAX_PARAMETERS}`)
    .optional()
    .describe("Values of the dashboard's parameters"),
  sorts: z
    .array(z.strictObject({ field_id: nonBlank(200), direction: z.enum(['asc', 'desc']).default('asc') }))
    .max(20)
    .optional()
    .describe("Order by fields of the widget's own shelves"),
  page: z.number().int().min(1).max(1_000_000).default(1),
  page_size: z.number().int().min(1).max(MAX_PAGE_SIZE).default(100),
});

export const fieldValuesInput = z.strictObject({
  token,
  id: id.describe('The dataset of a selector field'),
  fieldId: id.describe('A field a selector of the dashboard filters on'),
  query: wireString().max(200).optional(),
  limit: z.number().int().min(1).max(1_000).default(100),
});
export const fieldValuesOutput = z.object({
  field_id: z.number().int(),
  values: z.array(scalarOut),
  has_more: z.boolean(),
});

const shelf = z.array(z.object({ id: z.string(), title: z.string() }));
export const publicWidgetOutput = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  dataset_id: z.number().int(),
  rows: shelf,
  series: shelf,
  columns: shelf,
});

export const publicDashboardOutput = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  ...savedDashboardLayout,
  selectors: z.array(
    savedSelector.extend({ dataset_id: z.number().int().nullable().describe('The dataset of the selector field') }),
  ),
  widgets: z.array(publicWidgetOutput).describe('The widgets the layout shows, enough to draw them'),
  updated_at: z.string(),
});

const _state: Accepts<z.output<typeof linkStateOutput>, LinkState> = true;
const _data: Mirrors<PublicWidgetDataRequest, Omit<z.output<typeof widgetDataInput>, 'token' | 'id'>> = true;
const _values: Mirrors<PublicFieldValuesRequest, Omit<z.output<typeof fieldValuesInput>, 'token' | 'id'>> = true;
const _widget: Accepts<z.output<typeof publicWidgetOutput>, PublicWidgetView> = true;
const _dashboard: Accepts<z.output<typeof publicDashboardOutput>, PublicDashboardView> = true;
void [_state, _data, _values, _widget, _dashboard];
