import { defineRawRoute, jsonResponse } from '../../adapters/rest/raw-route';
import type { Actor } from '../../server/auth/actor';
import { ownedObject } from '../../server/access/object-access';
import { replaceFileSource, uploadFileSource } from '../../server/data-sources/files';
import type { AppDeps } from '../../server/app/deps';
import { idParam, multipartScope, replaceFields, requireFile, uploadFields, withUpload } from './file-upload';
import { dataSourceView } from './schemas';

/*
 * Files: a multipart upload cannot be a tRPC procedure, so POST /api/files and PUT /api/files/{id} are raw routes,
 * each declared once with its OpenAPI entry. DELETE /api/files/{id} takes no file and is a procedure (router.ts).
 */

const tags = ['Files'];
const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  description: 'File source id',
};

const importProperties = {
  sheet: {
    type: 'string',
    description: 'XLSX: the one sheet to import (default: every non-empty sheet, one table each)',
  },
  has_header: { type: 'boolean', description: 'First row holds column names (default: detected)' },
  delimiter: {
    type: 'string',
    description: 'CSV delimiter, 1-4 characters or tab / semicolon / comma / pipe (default: detected)',
  },
};

const uploadFile = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/api/files',
  auth: 'bearer',
  scope: multipartScope,
  doc: {
    operationId: 'file-upload',
    summary: 'Upload a file as a new file source',
    description:
      'multipart/form-data. CSV (any common encoding: UTF-8, UTF-16, windows-1251, KOI8-R), XLSX or Parquet, up to ' +
      'the installation upload limit (413 above it). The file is imported into a DuckDB database of the source; types ' +
      'are detected over the whole file. A broken or unsupported file answers 422 with the reason.',
    tags,
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
              workspace_id: {
                type: 'integer',
                minimum: 1,
                maximum: 2_147_483_647,
                description: "Default: the caller's personal workspace",
              },
              ...importProperties,
            },
          },
        },
      },
    },
    responses: { '200': jsonResponse('The created file source', dataSourceView) },
  },
  handler: (req, _reply, { deps, actor }) =>
    withUpload(req, deps, (received) => {
      const fields = uploadFields.parse(received.fields);
      return uploadFileSource(deps, actor, requireFile(received), fields);
    }),
});

const replaceFile = defineRawRoute<AppDeps, Actor>({
  method: 'PUT',
  path: '/api/files/{id}',
  auth: 'bearer',
  scope: multipartScope,
  doc: {
    operationId: 'file-replace',
    summary: 'Replace the file of a file source',
    description:
      'multipart/form-data. Keeps the source id and its dependants; a single-table file keeps its table name. Import ' +
      'options not sent are taken from the previous upload of the same format.',
    tags,
    parameters: [idParameter],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: { file: { type: 'string', format: 'binary' }, ...importProperties },
          },
        },
      },
    },
    responses: { '200': jsonResponse('The file source with its new file', dataSourceView) },
  },
  handler: async (req, _reply, { deps, actor }) => {
    const { id } = idParam.parse(req.params);
    // Who may replace is settled before a byte of the file is stored.
    await ownedObject(deps.db, actor, 'data_source', id);
    return withUpload(req, deps, (received) => {
      const fields = replaceFields.parse(received.fields);
      return replaceFileSource(deps, actor, id, requireFile(received), fields);
    });
  },
});

export const fileRawRoutes = [uploadFile, replaceFile];
