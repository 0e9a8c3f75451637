import { z } from 'zod';
import type { RawOperationDoc } from '../../adapters/rest/openapi';
import { dataSourceView, deletedOutput } from './schemas';

/** The OpenAPI description of the file routes (file-routes.ts), merged into /api/v3/api-docs. */

const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const tags = ['Files'];
const security = [{ bearerAuth: [] }];
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 }, description: 'File source id' };

const importProperties = {
  sheet: { type: 'string', description: 'XLSX: the one sheet to import (default: every non-empty sheet, one table each)' },
  has_header: { type: 'boolean', description: 'First row holds column names (default: detected)' },
  delimiter: { type: 'string', description: 'CSV delimiter, 1-4 characters or tab / semicolon / comma / pipe (default: detected)' },
};

const ok = (description: string, schema: z.ZodType) => ({
  description,
  content: { 'application/json': { schema: jsonSchema(schema) } },
});

export const fileRouteDocs: RawOperationDoc[] = [
  {
    method: 'post',
    path: '/api/files',
    operation: {
      operationId: 'file-upload',
      summary: 'Upload a file as a new file source',
      description:
        'multipart/form-data. CSV (any common encoding: UTF-8, UTF-16, windows-1251, KOI8-R), XLSX or Parquet, up to ' +
        'the installation upload limit (413 above it). The file is imported into a DuckDB database of the source; types ' +
        'are detected over the whole file. A broken or unsupported file answers 422 with the reason.',
      tags,
      security,
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: ['file'],
              properties: {
                file: { type: 'string', format: 'binary' },
                name: { type: 'string', description: 'Default: the file name without extension' },
                workspace_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: "Default: the caller's personal workspace" },
                ...importProperties,
              },
            },
          },
        },
      },
      responses: { '200': ok('The created file source', dataSourceView) },
    },
  },
  {
    method: 'put',
    path: '/api/files/{id}',
    operation: {
      operationId: 'file-replace',
      summary: 'Replace the file of a file source',
      description:
        'multipart/form-data. Keeps the source id and its dependants; a single-table file keeps its table name. Import ' +
        'options not sent are taken from the previous upload of the same format.',
      tags,
      security,
      parameters: [idParameter],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, ...importProperties } },
          },
        },
      },
      responses: { '200': ok('The file source with its new file', dataSourceView) },
    },
  },
  {
    method: 'delete',
    path: '/api/files/{id}',
    operation: {
      operationId: 'file-delete',
      summary: 'Delete a file source and its stored file',
      description: '400 while datasets depend on it.',
      tags,
      security,
      parameters: [idParameter],
      responses: { '200': ok('Deleted', deletedOutput) },
    },
  },
];
