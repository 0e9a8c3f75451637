import { z } from 'zod';
import { entityId, nonBlank, wireString } from '../common';

const fieldBase = {
  name: z.string(),
  type: z.enum(['string', 'integer', 'boolean', 'password', 'text', 'object', 'file']),
  label: z.string(),
  required: z.boolean(),
  default: z.union([z.string(), z.number(), z.boolean()]).nullable(),
  secret: z.boolean().describe('Write-only: reads answer <name>_set instead'),
};
// Two levels are all there is: a settings field, or an object (ssl, ssh_tunnel) of fields.
const settingsField = z.object({ ...fieldBase, fields: z.array(z.object(fieldBase)).optional() });

const sourceTypeView = z.object({
  type: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  default_port: z.number().int().nullable(),
  http_port: z.number().int().nullable(),
  driver_id: z.string(),
  supports: z.object({ ssl: z.boolean(), ssh: z.boolean(), initial_sql: z.boolean() }),
});
export const sourceTypeDetails = sourceTypeView.extend({ fields: z.array(settingsField) });
export const listSourceTypesOutput = z.object({ content: z.array(sourceTypeView) });

const type = wireString().min(1).max(50);
export const sourceTypeInput = z.strictObject({ type });
export const updateSourceTypeInput = z.strictObject({
  type,
  enabled: z.boolean().optional(),
  driver_id: wireString().min(1).max(100).nullable().optional().describe('null: the bundled driver'),
});

// Installed drivers (GET /api/admin/drivers) and the fields of an upload (POST /api/admin/drivers, raw.ts).
export const driverView = z.object({
  id: z.string().describe('Bundled: pg, mysql2, clickhouse-client, duckdb; uploaded plugin: its integer id'),
  name: z.string(),
  bundled: z.boolean(),
  package: z.string().nullable().describe('npm package of a bundled connector'),
  version: z.string().nullable(),
  source_types: z.array(z.string()),
  sha256: z.string().nullable().describe('Uploaded plugin: sha256 of the module file'),
  uploaded_by: z.number().int().nullable(),
  uploaded_at: z.string().nullable(),
  used_by: z.array(z.string()).describe('Source kinds whose driver this is'),
});
export const listDriversOutput = z.object({ content: z.array(driverView) });

export const uploadDriverFields = z.strictObject({
  source_type: wireString().min(1).max(50),
  version: nonBlank(100),
  name: nonBlank(200).optional(),
});

// AI provider settings (/api/admin/ai-provider); server/ai generates with them.
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
