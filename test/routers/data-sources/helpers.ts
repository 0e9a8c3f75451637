// Shared set-up for the data-source REST tests: the real test servers, direct SQL on them (to create and drop each
// test's own tables), and the REST calls the tests repeat.
import { createConnector, type SourceKind, type SourceSettings } from '../../../adapters/sources';
import { clickhouseSettings, mysqlSettings, pgSettings, randomName } from '../../adapters/sources/servers';
import type { z } from 'zod';
import type {
  accessLogOutput,
  checkOutput,
  columnValuesOutput,
  dataSourceView,
  listColumnsOutput,
  listDataSourcesOutput,
  listObjectsOutput,
  listQueriesOutput,
  listSchemasOutput,
  listTablesOutput,
  previewOutput,
  queryView,
  refreshMetadataOutput,
  validateSqlOutput,
} from '../../../routers/data-sources/schemas';
import { ok, type Rest } from '../../support/rest';

export { randomName };

/** Wire settings of each real test server (no password: the servers trust loopback). */
export const SERVERS: Record<Exclude<SourceKind, 'file'>, () => SourceSettings> = {
  postgresql: () => pgSettings(),
  mysql: () => mysqlSettings(),
  clickhouse: () => clickhouseSettings(),
};

export const DB_KINDS = ['postgresql', 'mysql', 'clickhouse'] as const;
export type DbKind = (typeof DB_KINDS)[number];

/** The schema a test table lands in on each server. */
export const TEST_SCHEMA: Record<DbKind, string> = { postgresql: 'public', mysql: 'test', clickhouse: 'default' };

/** Runs statements directly on a test server (not through the platform). */
export async function exec(kind: DbKind, ...statements: string[]): Promise<void> {
  const c = createConnector(kind, SERVERS[kind]());
  try {
    for (const s of statements) await c.query(s, []);
  } finally {
    await c.close();
  }
}

/** A table `name(id, city, amount)` with three rows, in each dialect's own DDL. */
export async function createCitiesTable(kind: DbKind, name: string): Promise<void> {
  const q =
    kind === 'postgresql'
      ? `"${name.replace(/"/g, '""')}"`
      : `\`${name.replace(/`/g, kind === 'mysql' ? '``' : '\\`')}\``;
  const rows = `(1, 'Москва', 10.5), (2, 'Казань', 20), (3, 'Самара', NULL)`;
  switch (kind) {
    case 'postgresql':
      return exec(
        kind,
        `CREATE TABLE ${q} (id int PRIMARY KEY, city text, amount numeric(10,2))`,
        `INSERT INTO ${q} VALUES ${rows}`,
      );
    case 'mysql':
      return exec(
        kind,
        `CREATE TABLE test.${q} (id int PRIMARY KEY, city varchar(100), amount decimal(10,2))`,
        `INSERT INTO test.${q} VALUES ${rows}`,
      );
    case 'clickhouse':
      return exec(
        kind,
        `CREATE TABLE default.${q} (id Int32, city String, amount Nullable(Float64)) ENGINE = MergeTree ORDER BY id`,
        `INSERT INTO default.${q} VALUES ${rows}`,
      );
  }
}

export async function dropTable(kind: DbKind, name: string): Promise<void> {
  const q =
    kind === 'postgresql'
      ? `"${name.replace(/"/g, '""')}"`
      : `\`${name.replace(/`/g, kind === 'mysql' ? '``' : '\\`')}\``;
  const qualified = kind === 'postgresql' ? q : `${TEST_SCHEMA[kind]}.${q}`;
  await exec(kind, `DROP TABLE IF EXISTS ${qualified}`).catch(() => undefined);
}

/** Kept here too: the data-source tests import it with their other helpers. */
export { ok };

// Answers of the data-source operations, as the routers' zod outputs describe them.
export type SourceView = z.output<typeof dataSourceView>;
export type SourcePage = z.output<typeof listDataSourcesOutput>;
export type CheckResult = z.output<typeof checkOutput>;
export type SchemaList = z.output<typeof listSchemasOutput>;
export type TableList = z.output<typeof listTablesOutput>;
export type ColumnList = z.output<typeof listColumnsOutput>;
export type MetadataRefresh = z.output<typeof refreshMetadataOutput>;
export type DependentObjects = z.output<typeof listObjectsOutput>;
export type Preview = z.output<typeof previewOutput>;
export type ColumnValues = z.output<typeof columnValuesOutput>;
export type QueryView = z.output<typeof queryView>;
export type QueryPage = z.output<typeof listQueriesOutput>;
export type SqlCheck = z.output<typeof validateSqlOutput>;
export type AccessLogPage = z.output<typeof accessLogOutput>;

export async function createSource(
  api: Rest,
  token: string | undefined,
  kind: DbKind,
  extra: { name?: string; workspace_id?: number; settings?: Record<string, unknown> } = {},
) {
  return ok<SourceView>(
    await api.post(
      '/api/data-source',
      {
        name: extra.name ?? randomName('src'),
        type: kind,
        settings: { ...SERVERS[kind](), ...extra.settings },
        workspace_id: extra.workspace_id,
      },
      token,
    ),
  );
}

/** A multipart upload through fastify.inject. */
export function upload(
  api: Rest,
  method: 'POST' | 'PUT',
  url: string,
  token: string | undefined,
  file: { name: string; content: Buffer | string } | undefined,
  fields: Record<string, string> = {},
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file)
    form.append(
      'file',
      new Blob([typeof file.content === 'string' ? Buffer.from(file.content) : file.content]),
      file.name,
    );
  return api.call(method, url, { token, body: form });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
