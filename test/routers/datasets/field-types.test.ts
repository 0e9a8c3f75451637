import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { closedPort } from '../../adapters/sources/servers';
import {
  createSource,
  dropTable,
  exec,
  ok,
  upload,
  randomName,
  TEST_SCHEMA,
  type DbKind,
} from '../data-sources/helpers';
import { createDataset, insertSource } from './helpers';
import type { z } from 'zod';
import type { datasetDetails, validateSchemaOutput } from '../../../routers/datasets/schemas';

/*
 * PUT /api/dataset/{id}/schema fills the type of physical table fields sent without one from the source's columns;
 * POST /api/data-source/{id}/metadata/refresh fills those still unknown. One real server of each kind, and a file.
 */

type SavedSchema = z.output<typeof datasetDetails>;
type SavedField = SavedSchema['fields'][number];
type SchemaCheck = z.output<typeof validateSchemaOutput>;

const { t, api } = useTestApp();
let cast: RoleCast;
let token: string;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  token = cast.tokens.wsAdmin!;
});

/** A table of five typed columns in each server's own DDL: id, city, amount, day, at. */
const DDL: Record<DbKind, (name: string) => string> = {
  postgresql: (n) => `CREATE TABLE "${n}" (id int, city text, amount numeric(10,2), day date, at timestamp)`,
  mysql: (n) => `CREATE TABLE test.\`${n}\` (id int, city varchar(50), amount double, day date, at datetime)`,
  clickhouse: (n) =>
    `CREATE TABLE default.\`${n}\` (id Int32, city String, amount Float64, day Date, at DateTime) ENGINE = Memory`,
};
const EXPECTED = { id: 'integer', city: 'string', amount: 'float', day: 'date', at: 'datetime' } as const;

/** The five columns with no type, 'unknown' and null, and one with a type the client chose on purpose. */
function tableSchema(sourceId: number, schema: string | null, table: string) {
  return {
    objects: [{ id: -1, data_source_id: sourceId, name: 't', schema, table }],
    fields: [
      { id: -10, object_id: -1, column: 'id', primitive_type: 'string' },
      { id: -11, object_id: -1, column: 'city' },
      { id: -12, object_id: -1, column: 'amount', primitive_type: 'unknown' },
      { id: -13, object_id: -1, column: 'day', primitive_type: null },
      { id: -14, object_id: -1, column: 'at' },
      { id: -20, name: 'Итого', formula: 'SUM([t.amount])' },
      { id: -21, name: 'Последний день', formula: 'MAX([t.day])' },
    ],
    relations: [],
    hierarchies: [],
    filters: [],
    parameters: [],
  };
}

const typesOf = (fields: SavedField[]) =>
  Object.fromEntries(fields.map((f) => [f.kind === 'physical' ? f.column! : f.name, f.primitive_type]));

async function saveSchema(datasetId: number, body: unknown): Promise<SavedSchema> {
  const res = await api.put(`/api/dataset/${datasetId}/schema`, body, token);
  if (res.status !== 200) throw new Error(`schema save: ${res.status} ${JSON.stringify(res.body)}`);
  return ok<SavedSchema>(res);
}

describe.each(['postgresql', 'mysql', 'clickhouse'] as const)('PUT /api/dataset/{id}/schema on %s', (kind) => {
  const table = randomName('types');
  let sourceId: number;

  beforeAll(async () => {
    await exec(kind, DDL[kind](table));
    sourceId = (await createSource(api, token, kind, { workspace_id: cast.workspaceId })).id;
  });
  afterAll(() => dropTable(kind, table));

  it('takes the type of untyped physical fields from the column and keeps a type the client sent', async () => {
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] });
    const saved = await saveSchema(ds.id, tableSchema(sourceId, TEST_SCHEMA[kind], table));
    expect(typesOf(saved.fields)).toEqual({ ...EXPECTED, id: 'string', Итого: 'float', 'Последний день': 'date' });
    // and GET answers what was stored
    const got = ok<SavedSchema>(await api.get(`/api/dataset/${ds.id}`, token));
    expect(typesOf(got.fields)).toEqual(typesOf(saved.fields));
  });

  it('types the fields of an SQL object from the columns of its query', async () => {
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] });
    const from = kind === 'postgresql' ? `"${table}"` : `${TEST_SCHEMA[kind]}.\`${table}\``;
    const saved = await saveSchema(ds.id, {
      ...tableSchema(sourceId, null, table),
      objects: [
        {
          id: -1,
          data_source_id: sourceId,
          name: 't',
          kind: 'sql',
          sql: `SELECT id, city, amount, day, at FROM ${from};`,
        },
      ],
    });
    expect(typesOf(saved.fields)).toEqual({ ...EXPECTED, id: 'string', Итого: 'float', 'Последний день': 'date' });
  });

  it('finds the table in the default schema when the object names none', async () => {
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] });
    const saved = await saveSchema(ds.id, tableSchema(sourceId, null, table));
    expect(typesOf(saved.fields)).toMatchObject({ city: 'string', day: 'date', at: 'datetime' });
  });
});

describe('PUT /api/dataset/{id}/schema on a file source (DuckDB)', () => {
  it('types the fields of an uploaded table from its DuckDB columns', async () => {
    const csv = 'id,city,amount,day\n1,Москва,10.5,2024-01-02\n2,Казань,20,2024-02-03\n';
    const src = ok<{ id: number; settings: { file: { tables: string[] } } }>(
      await upload(
        api,
        'POST',
        '/api/files',
        token,
        { name: `${uniq('cities')}.csv`, content: csv },
        { workspace_id: String(cast.workspaceId) },
      ),
    );
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [src.id] });
    const body = tableSchema(src.id, null, src.settings.file.tables[0]);
    body.fields = body.fields.filter((f) => f.column !== 'at');
    const saved = await saveSchema(ds.id, body);
    expect(typesOf(saved.fields)).toEqual({
      id: 'string',
      city: 'string',
      amount: 'float',
      day: 'date',
      Итого: 'float',
      'Последний день': 'date',
    });
  });
});

describe('when the source cannot tell', () => {
  it('saves anyway with unknown types when the source is down', async () => {
    const down = await insertSource(t.deps, cast.workspaceId, {
      settings: { host: '127.0.0.1', port: await closedPort(), db: 'test', username: 'postgres' },
    });
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [down] });
    const saved = await saveSchema(ds.id, tableSchema(down, 'public', 'whatever'));
    expect(typesOf(saved.fields)).toMatchObject({
      id: 'string',
      city: 'unknown',
      amount: 'unknown',
      day: 'unknown',
      at: 'unknown',
    });
  });

  it('POST /schema/validate answers the same inferred types, and a missing column stays unknown', async () => {
    const table = randomName('types');
    await exec('postgresql', DDL.postgresql(table));
    try {
      const source = (await createSource(api, token, 'postgresql', { workspace_id: cast.workspaceId })).id;
      const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [source] });
      const body = tableSchema(source, 'public', table);
      body.fields.push({ id: -15, object_id: -1, column: 'no_such_column' });
      const res = await api.post(`/api/dataset/${ds.id}/schema/validate`, body, token);
      expect(res.status).toBe(200);
      expect(Object.fromEntries(ok<SchemaCheck>(res).fields.map((f) => [f.name, f.primitive_type]))).toMatchObject({
        city: 'string',
        day: 'date',
        no_such_column: 'unknown',
        Итого: 'float',
      });
    } finally {
      await dropTable('postgresql', table);
    }
  });
});

describe('POST /api/data-source/{id}/metadata/refresh', () => {
  it('types the fields saved as unknown once the table is there, re-types calculated fields and bumps the version', async () => {
    const table = randomName('later');
    const source = (await createSource(api, token, 'postgresql', { workspace_id: cast.workspaceId })).id;
    const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [source] });
    try {
      const before = await saveSchema(ds.id, tableSchema(source, 'public', table));
      expect(typesOf(before.fields)).toMatchObject({ city: 'unknown', day: 'unknown', 'Последний день': 'unknown' });
      await exec('postgresql', DDL.postgresql(table));
      const refreshed = await api.post(`/api/data-source/${source}/metadata/refresh`, undefined, token);
      expect(refreshed.status).toBe(200);
      const after = ok<SavedSchema>(await api.get(`/api/dataset/${ds.id}`, token));
      expect(typesOf(after.fields)).toEqual({ ...EXPECTED, id: 'string', Итого: 'float', 'Последний день': 'date' });
      expect(after.version).toBeGreaterThan(before.version);
    } finally {
      await dropTable('postgresql', table);
    }
  });
});
