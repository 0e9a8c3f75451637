import { z } from 'zod';
import { wireString } from '../common';

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
