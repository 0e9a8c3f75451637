import { z } from 'zod';
import { entityId, nonBlank, wireString } from '../common';
import { WIDGET_KINDS } from '../../server/service/dictionary';

const prompt = nonBlank(4000).describe('What to generate, in the user’s words');
export const accessOutput = z.object({ enabled: z.boolean(), reason: z.string().nullable() });

export const formulaInput = z.strictObject({ dataset_id: entityId(), prompt });
export const formulaOutput = z.object({ formula: z.string(), primitive_type: z.string() });

export const sqlInput = z.strictObject({
  data_source_id: entityId(),
  schema: wireString().min(1).max(500).optional(),
  prompt,
});
export const sqlOutput = z.object({ sql: z.string() });

const kinds = Object.keys(WIDGET_KINDS) as [string, ...string[]];
export const widgetCodeInput = z.strictObject({ dataset_id: entityId(), prompt, type: z.enum(kinds) });
export const widgetCodeOutput = z.object({
  code: z.record(z.string(), z.unknown()).describe('A widget body for POST /api/widget'),
});
