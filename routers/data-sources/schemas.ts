import { z } from 'zod';
import { SOURCE_KINDS } from '../../adapters/sources';
import { ACCESS_ACTIONS, ACCESS_LOG_SORT_FIELDS } from '../../server/data-sources/access-log';
import { PREVIEW_MAX_LIMIT } from '../../server/data-sources/browse';
import {
  DATA_SOURCE_SORT_FIELDS,
  type CreateDataSourceInput,
  type UpdateDataSourceInput,
} from '../../server/data-sources/data-sources';
import { QUERY_SORT_FIELDS } from '../../server/data-sources/sql-console';
import { MAX_STORED_ROWS } from '../../server/data-sources/query-runner';
import {
  dateFromParam,
  dateToParam,
  entityId,
  nonBlank,
  pagedQuery,
  pagedQueryOver,
  pageSchema,
  stdListQuery,
  wireString,
  type Mirrors,
} from '../common';

const id = entityId();
const port = z.number().int().min(1).max(65535);
const KIND_TYPES = SOURCE_KINDS.map((k) => k.type) as [string, ...string[]];

// ---- settings --------------------------------------------------------------------------------------------------

const secret = wireString()
  .max(16_384)
  .nullable()
  .optional()
  .describe('Write-only. Omitted or "" keeps the stored value; null removes it');
const pem = wireString().max(65_536).optional();

const sslInput = z.strictObject({
  enabled: z.boolean(),
  reject_unauthorized: z.boolean().optional().describe('Default true: a certificate that does not verify is refused'),
  ca: pem,
  cert: pem,
  key: secret,
  key_set: z.boolean().optional().describe('Read-only flag from a read; ignored'),
});

const sshTunnelInput = z.strictObject({
  host: wireString().max(255),
  port: port.optional().describe('Default 22'),
  username: wireString().max(255),
  password: secret,
  private_key: secret,
  passphrase: secret,
  password_set: z.boolean().optional(),
  private_key_set: z.boolean().optional(),
  passphrase_set: z.boolean().optional(),
});

const settingsInput = z
  .strictObject({
    host: wireString().max(255).optional().describe('Required for database kinds'),
    port: port.optional().describe('Pre-filled by the source type when omitted'),
    http_port: port.optional().describe('ClickHouse only (HTTP interface); default 8123'),
    username: wireString().max(255).optional(),
    password: secret,
    db: wireString().max(255).optional(),
    use_ssh: z.boolean().optional(),
    ssl: sslInput.nullable().optional(),
    ssh_tunnel: sshTunnelInput.nullable().optional(),
    initial_sql: wireString().max(20_000).optional().describe('Run on every new connection'),
    password_set: z.boolean().optional().describe('Read-only flag from a read; ignored'),
  })
  .describe('Connection settings of a database kind. Secrets are write-only');

const settingsView = z
  .object({
    host: z.string().optional(),
    port: z.number().int().optional(),
    http_port: z.number().int().optional(),
    username: z.string().optional(),
    db: z.string().optional(),
    use_ssh: z.boolean().optional(),
    initial_sql: z.string().optional(),
    password_set: z.boolean().optional().describe('A password is stored (never returned)'),
    ssl: z
      .object({
        enabled: z.boolean(),
        reject_unauthorized: z.boolean().optional(),
        ca: z.string().optional(),
        cert: z.string().optional(),
        key_set: z.boolean(),
      })
      .optional(),
    ssh_tunnel: z
      .object({
        host: z.string(),
        port: z.number().int().optional(),
        username: z.string(),
        password_set: z.boolean(),
        private_key_set: z.boolean(),
        passphrase_set: z.boolean(),
      })
      .optional(),
    file: z
      .object({
        tables: z.array(z.string()),
        original_name: z.string().optional(),
        format: z.enum(['csv', 'xlsx', 'parquet']).optional(),
        size_bytes: z.number().int().optional(),
        row_count: z.number().int().optional(),
        sheet: z.string().optional(),
        has_header: z.boolean().optional(),
        delimiter: z.string().optional(),
        uploaded_at: z.string().optional(),
        table_details: z
          .array(
            z.object({
              name: z.string(),
              sheet: z.string().optional(),
              row_count: z.number().int(),
              column_count: z.number().int(),
            }),
          )
          .optional(),
      })
      .optional()
      .describe('File sources: what was uploaded and the tables it became'),
  })
  .describe('Settings without secrets: `*_set` says whether each secret is stored');

export const dataSourceView = z.object({
  id: z.number().int(),
  uuid: z.string().describe('Stable source code (pipelines address substitution rules by it)'),
  name: z.string(),
  type: z.string(),
  type_name: z.string(),
  workspace_id: z.number().int(),
  settings: settingsView,
  author: z.object({ id: z.number().int(), username: z.string() }).nullable(),
  can_edit: z.boolean().describe('The caller may change, delete, copy and query the source'),
  created_at: z.string(),
  updated_at: z.string(),
});

// ---- connections -----------------------------------------------------------------------------------------------

export const listDataSourcesInput = z.strictObject(
  stdListQuery(DATA_SOURCE_SORT_FIELDS, z.enum(KIND_TYPES).describe('Source kind')),
);
export const listDataSourcesOutput = pageSchema(dataSourceView);

const checkConnectionFlag = z
  .boolean()
  .optional()
  .describe('Check the connection first; refuse to save (400) when it fails');

export const createDataSourceInput = z.strictObject({
  name: nonBlank(200),
  type: z.enum(KIND_TYPES).describe('Source kind (file sources are created by POST /api/files)'),
  settings: settingsInput,
  workspace_id: id.optional().describe("Default: the caller's personal workspace"),
  check_connection: checkConnectionFlag,
});

export const updateDataSourceInput = z.strictObject({
  id,
  name: nonBlank(200).optional(),
  type: wireString()
    .optional()
    .describe('Accepted when it names the current kind (a read sent back); the kind never changes'),
  settings: settingsInput.optional().describe('The whole new settings; omitted secrets stay'),
  check_connection: checkConnectionFlag,
});

// POST /api/data-source and PUT /api/data-source/{id} hand their body (without the path id) to the server, which
// declares what it takes in server/data-sources/data-sources.ts.
const _createSource: Mirrors<CreateDataSourceInput, z.output<typeof createDataSourceInput>> = true;
const _updateSource: Mirrors<UpdateDataSourceInput, Omit<z.output<typeof updateDataSourceInput>, 'id'>> = true;
// The settings are mirrors too, but for the read-only `*_set` flags a client may send back from a read (ignored).
type SettingsBody = z.output<typeof settingsInput>;
type SettingsTaken = CreateDataSourceInput['settings'];
const _settings: Mirrors<SettingsTaken, Omit<SettingsBody, 'password_set'>> = true;
const _ssl: Mirrors<NonNullable<SettingsTaken['ssl']>, Omit<NonNullable<SettingsBody['ssl']>, 'key_set'>> = true;
const _sshTunnel: Mirrors<
  NonNullable<SettingsTaken['ssh_tunnel']>,
  Omit<NonNullable<SettingsBody['ssh_tunnel']>, 'password_set' | 'private_key_set' | 'passphrase_set'>
> = true;
void [_createSource, _updateSource, _settings, _ssl, _sshTunnel];

export const checkInput = z.strictObject({ type: z.enum(KIND_TYPES), settings: settingsInput });
export const checkSavedInput = z.strictObject({
  id,
  settings: settingsInput.partial().optional().describe('Owners only: settings to try instead of the saved ones'),
});
export const checkOutput = z.object({
  ok: z.boolean(),
  message: z.string().describe('«Подключение успешно» or the driver error text'),
});

export const copyInput = z.strictObject({
  id,
  name: nonBlank(200).optional().describe('Default: «<name> (копия)»'),
  workspace_id: id.optional().describe("Default: the source's workspace"),
});

// ---- metadata and data -----------------------------------------------------------------------------------------

const name = wireString().min(1).max(1024);
const schemaParam = name
  .optional()
  .describe('Default: public (PostgreSQL), the settings db (MySQL, ClickHouse), main (files)');

export const listSchemasOutput = z.object({ content: z.array(z.string()) });
export const listTablesInput = z.strictObject({
  id,
  schema: schemaParam,
  query: wireString().max(200).optional().describe('Search in table names'),
});
export const listTablesOutput = z.object({
  content: z.array(z.object({ schema: z.string(), name: z.string(), kind: z.enum(['table', 'view']) })),
});
const primitive = z.enum(['string', 'integer', 'float', 'boolean', 'date', 'datetime', 'unknown']);
export const listColumnsInput = z.strictObject({ id, schema: schemaParam, table: name });
export const listColumnsOutput = z.object({
  content: z.array(
    z.object({ name: z.string(), db_type: z.string(), primitive_type: primitive, nullable: z.boolean() }),
  ),
});
export const refreshMetadataOutput = z.object({ schemas: z.array(z.string()), refreshed_at: z.string() });

export const listObjectsOutput = z.object({
  content: z.array(
    z.object({
      type: z.enum(['dataset', 'widget', 'dashboard']),
      id: z.number().int(),
      name: z.string(),
      workspace_id: z.number().int(),
    }),
  ),
  hidden_count: z.number().int().describe('Objects in workspaces the caller cannot see'),
});

const resultColumn = z.object({ name: z.string(), db_type: z.string(), primitive_type: primitive });
const limit = (def: number, max: number) =>
  z.number().int().min(1).max(max).optional().describe(`Default ${def}, at most ${max}`);

export const previewInput = z.strictObject({
  id,
  schema: schemaParam,
  table: name,
  limit: limit(100, PREVIEW_MAX_LIMIT),
});
export const previewOutput = z.object({
  schema: z.string(),
  table: z.string(),
  columns: z.array(resultColumn),
  rows: z.array(z.array(z.unknown())),
  truncated: z.boolean().describe('The table has more rows than returned'),
  limit: z.number().int(),
});

export const columnValuesInput = z.strictObject({
  id,
  schema: schemaParam,
  table: name,
  column: name,
  query: wireString().max(200).optional().describe('Only values containing this text (case-insensitive)'),
  limit: limit(100, PREVIEW_MAX_LIMIT),
});
export const columnValuesOutput = z.object({
  column: z.string(),
  values: z.array(z.unknown()),
  truncated: z.boolean(),
});

// ---- SQL console -----------------------------------------------------------------------------------------------

const queryId = z.uuid();
const parameter = z.union([wireString(), z.number(), z.boolean(), z.null()]);
const sqlText = wireString().trim().min(1).max(1_000_000);
const parameters = z
  .array(parameter)
  .max(1000)
  .optional()
  .describe('Positional values for $1.. (PostgreSQL, files) or ? (MySQL); ClickHouse takes none');

const historyItem = z.object({
  query_id: z.string(),
  data_source_id: z.number().int(),
  user_id: z.number().int().nullable(),
  username: z.string().nullable(),
  sql: z.string(),
  parameters: z.array(parameter),
  state: z.enum(['running', 'finished', 'failed', 'cancelled']),
  error: z.string().nullable(),
  row_count: z.number().int().nullable().describe('Rows stored (at most the limit)'),
  truncated: z.boolean().describe('The result had more rows than were stored'),
  cancel_requested: z.boolean(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
});
export const queryView = historyItem.extend({
  columns: z.array(resultColumn).nullable(),
  rows: z.array(z.array(z.unknown())).describe('One page of the stored result'),
  result_available: z.boolean().describe('false once an old result has been dropped (only the newest are kept)'),
  page: z.object({
    size: z.number().int(),
    number: z.number().int(),
    total_elements: z.number().int(),
    total_pages: z.number().int(),
  }),
});

export const listQueriesInput = z.strictObject({
  id,
  ...pagedQueryOver(QUERY_SORT_FIELDS),
  createdAtFrom: dateFromParam.optional(),
  createdAtTo: dateToParam.optional(),
});
export const listQueriesOutput = pageSchema(historyItem);
export const runQueryInput = z.strictObject({
  id,
  sql: sqlText,
  parameters,
  limit: limit(MAX_STORED_ROWS, MAX_STORED_ROWS).describe(
    `Rows kept for paging; default and maximum ${MAX_STORED_ROWS}`,
  ),
});
export const getQueryInput = z.strictObject({
  id,
  queryId,
  page: pagedQuery.page,
  size: pagedQuery.size.describe('Rows per result page'),
});
export const queryIdInput = z.strictObject({ id, queryId });
export const validateSqlInput = z.strictObject({ id, sql: sqlText, parameters });
export const validateSqlOutput = z.object({
  valid: z.boolean(),
  checked: z.boolean().describe('false: this kind of statement cannot be checked without running it'),
  columns: z.array(resultColumn).nullable().describe('Result columns of a query'),
  message: z.string().nullable(),
});

export const accessLogInput = z.strictObject({
  id,
  ...pagedQueryOver(ACCESS_LOG_SORT_FIELDS),
  userId: id.optional(),
  action: z.enum(ACCESS_ACTIONS).optional(),
  createdAtFrom: dateFromParam.optional(),
  createdAtTo: dateToParam.optional(),
});
export const accessLogOutput = pageSchema(
  z.object({
    id: z.number().int(),
    user_id: z.number().int().nullable(),
    username: z.string().nullable(),
    action: z.enum(ACCESS_ACTIONS),
    detail: z.string(),
    created_at: z.string(),
  }),
);
