import { defineRawRoute, jsonResponse } from '../../adapters/rest/raw-route';
import type { Actor } from '../../server/auth/actor';
import type { AppDeps } from '../../server/app/deps';
import { uploadDriver } from '../../server/admin/drivers';
import { AppError, invalid } from '../../server/kernel/errors';
import { INVALID_TEXT_MESSAGE, isWireText } from '../common';
import { multipartScope, requireFile, withUpload, type Received } from '../data-sources/file-upload';
import { driverView, uploadDriverFields } from './schemas';

/*
 * POST /api/admin/drivers (admin.uploadDriver): a multipart upload cannot be a tRPC procedure. System
 * administrators only, settled before a byte of the file is read.
 */

const nameRule = uploadDriverFields.shape.name.unwrap();

/**
 * The file and the fields to save. Without `name` the file name is the driver's name, so it is held to the rule of
 * `name`: the multipart parser bounds neither its length nor its characters, and a NUL fails in the database as a
 * 500. A NUL is refused even beside `name`: such a file name is no file name.
 */
function uploadOf(received: Received) {
  const file = requireFile(received);
  const fields = uploadDriverFields.parse(received.fields);
  if (!isWireText(file.filename)) {
    throw invalid({ file: `file name ${INVALID_TEXT_MESSAGE}` }, 'Имя файла содержит недопустимые символы');
  }
  if (fields.name !== undefined) return { file, fields };
  const name = nameRule.safeParse(file.filename);
  if (!name.success) {
    throw invalid(
      { file: `file name as the driver name: ${name.error.issues[0].message}` },
      'Имя файла не подходит как название драйвера: задайте название в поле name',
    );
  }
  return { file, fields: { ...fields, name: name.data } };
}

const uploadDriverRoute = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/api/admin/drivers',
  auth: 'bearer',
  scope: multipartScope,
  doc: {
    operationId: 'admin-uploadDriver',
    summary: 'Upload a driver file',
    description:
      'System administrator. multipart/form-data: file — a connector plugin, an ES module exporting ' +
      '`createConnector(settings, options)` that returns an object of the source connector interface (kind, dialect, ' +
      'check, listSchemas, listTables, listColumns, query, stream, openStream, close); source_type — the kind it ' +
      'serves; version. The module is stored under DATA_DIR as <sha256>.mjs, imported and checked at once (no ' +
      'restart); a file that is not an ES module, misses the interface or builds a connector of another kind or ' +
      'dialect than source_type answers 400. Pick it for a kind with PUT /api/source-types/{type} (driver_id = its ' +
      'id): from then on new connections of that kind are built by it.',
    tags: ['Administration'],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file', 'source_type', 'version'],
            properties: {
              file: { type: 'string', format: 'binary' },
              source_type: { type: 'string', description: 'postgresql, mysql, clickhouse or file' },
              version: { type: 'string' },
              name: { type: 'string', description: 'Default: the file name, held to the same rules' },
            },
          },
        },
      },
    },
    responses: {
      '200': jsonResponse('The uploaded plugin with its sha256', driverView),
    },
  },
  handler: async (req, _reply, { deps, actor }) => {
    if (!actor.isSysadmin) throw new AppError('forbidden');
    return withUpload(req, deps, (received) => {
      const { file, fields } = uploadOf(received);
      return uploadDriver(deps, actor, file, fields);
    });
  },
});

export const driverRawRoutes = [uploadDriverRoute];
