import { z } from 'zod';
import { INVALID_TEXT_MESSAGE, isWireText, wireString } from '../common';

export const settingsOutput = z.object({
  instance_name: z.string(),
  base_url: z.string().nullable(),
  default_locale: z.string(),
  session_token_ttl: z.number().int(),
  features: z.record(z.string(), z.boolean()),
  revisions_max_per_object: z.number().int().describe('Most revisions kept per object; 0: all'),
});

export const settingsUpdateInput = z.strictObject({
  instance_name: wireString().trim().min(1).max(200).optional(),
  base_url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .refine(isWireText, { error: INVALID_TEXT_MESSAGE })
    .nullable()
    .optional(),
  default_locale: z.enum(['ru', 'en']).optional(),
  features: z.record(wireString().regex(/^[a-z_]{1,64}$/), z.boolean()).optional(),
  session_token_ttl: z.literal(900, { error: 'is read-only (900)' }).optional(),
  revisions_max_per_object: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe('Most revisions kept per object (the oldest are dropped at the next save); 0: all'),
});

const labels = z.record(z.string(), z.string());
export const dictionaryOutput = z.object({
  statuses: labels,
  stages: labels,
  pipeline_binding: labels,
  workspace_types: labels,
  roles: labels,
  widget_kinds: labels,
  source_kinds: labels,
  deploy_hints: labels,
});
