import { z } from 'zod';
import { nonBlank, wireString } from '../common';

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
