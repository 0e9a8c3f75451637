import { z } from 'zod';
import { entityId, nonBlank, wireString } from '../common';
import { WIDGET_KINDS } from '../../server/service/dictionary';

const prompt = nonBlank(4000).describe('What to generate, in the user’s words');
const url = wireString()
  .max(2000)
  .refine((s) => /^https?:\/\/[^\s]+$/i.test(s) && URL.canParse(s), { error: 'must be an http(s) URL' });

const providerFields = {
  enabled: z.boolean().optional(),
  provider: wireString().min(1).max(50).optional().describe('openai, azure, ollama, vllm or any compatible gateway'),
  base_url: url.nullable().optional().describe('OpenAI-compatible endpoint, e.g. https://api.openai.com/v1'),
  model: wireString().min(1).max(200).nullable().optional(),
  api_key: wireString()
    .min(1)
    .max(4000)
    .nullable()
    .optional()
    .describe('Write-only; omitted: unchanged; null: cleared'),
  allowed_group_ids: z.array(entityId()).max(1000).optional().describe('Empty: every user'),
  timeout_ms: z.number().int().min(1000).max(120_000).optional(),
};
export const updateAiProviderInput = z.strictObject(providerFields);
export const checkAiProviderInput = z.strictObject(providerFields).optional();

export const aiProviderView = z.object({
  enabled: z.boolean(),
  provider: z.string(),
  base_url: z.string().nullable(),
  model: z.string().nullable(),
  api_key: z.string().nullable().describe('Masked'),
  api_key_set: z.boolean(),
  allowed_group_ids: z.array(z.number().int()),
  timeout_ms: z.number().int(),
});
export const checkOutput = z.object({ ok: z.boolean(), message: z.string() });

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
