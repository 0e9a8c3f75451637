import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createPgSource, sourceDb } from '../widgets/world';
import { createObjectDataset, materialise, runExtract } from './world';

/*
 * An extract loaded before its dataset gained a field or an object: reading what it does not have is a 400 that names
 * the field or object and says to synchronise, not DuckDB's binder error; a run brings it back.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const table = uniq('x_stale');
let datasetId: number;
let sourceId: number;
const owner = () => cast.tokens.wsAdmin!;

interface SchemaView {
  objects: { id: number; data_source_id: number; name: string; schema: string | null; table: string | null }[];
  fields: { id: number; object_id: number | null; name: string; column: string | null; primitive_type: string }[];
}

/** PUT /api/dataset/{id}/schema with the saved objects and fields kept (ids and all) and the given ones added. */
async function addToSchema(objects: SchemaView['objects'], fields: SchemaView['fields']): Promise<void> {
  const saved = ok<SchemaView>(await api.get(`/api/dataset/${datasetId}`, owner()));
  const body = {
    objects: [...saved.objects, ...objects].map(({ id, data_source_id, name, schema, table }) => ({
      id,
      data_source_id,
      name,
      schema,
      table,
    })),
    fields: [...saved.fields, ...fields].map(({ id, object_id, name, column, primitive_type }) => ({
      id,
      object_id,
      name,
      column,
      primitive_type,
    })),
    relations: [],
    hierarchies: [],
    filters: [],
    parameters: [],
  };
  ok(await api.put(`/api/dataset/${datasetId}/schema`, body, owner()));
}

async function dataOf(row: string) {
  const widget = ok<{ id: number }>(
    await api.post(
      '/api/widget',
      { name: 'w', dataset_id: datasetId, type: 'table', rows: [{ id: 'r', sql: row }], columns: [] },
      owner(),
    ),
  );
  return api.post(`/api/widget/${widget.id}/data`, {}, owner());
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${table} (id int, product text, qty int)`);
  await db.query(`INSERT INTO ${table} VALUES (1, 'чай', 2), (2, 'кофе', 3)`);
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = await createObjectDataset(api, owner(), {
    name: uniq('stale'),
    workspaceId: cast.workspaceId,
    sourceId,
    object: { name: 'sales', schema: 'public', table },
    columns: [
      ['id', 'integer'],
      ['product', 'string'],
    ],
  });
  await materialise(api, owner(), datasetId);
  await runExtract(api, owner(), datasetId);
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.end();
});

describe('a stale extract', () => {
  it('a field added after the last run: a Russian 400 naming it and asking for a synchronisation', async () => {
    const [sales] = ok<SchemaView>(await api.get(`/api/dataset/${datasetId}`, owner())).objects;
    await addToSchema(
      [],
      [{ id: -5, object_id: sales.id, name: 'Количество', column: 'qty', primitive_type: 'integer' }],
    );
    for (const res of [
      await dataOf('[sales.Количество]'),
      await api.post(`/api/dataset/${datasetId}/preview`, {}, owner()),
    ]) {
      expect(res.status).toBe(400);
      const message = failure(res).message;
      expect(message).toMatch(/^Извлечение данных устарело: в нём нет поля «Количество»/);
      expect(message).toMatch(/Запустите синхронизацию датасета/);
      expect(message).not.toMatch(/Binder|Table "t0"|qty/);
    }
    // Fields the extract has still answer.
    expect((await dataOf('[sales.product]')).status).toBe(200);
  });

  it('an object added after the last run: the same, naming the object', async () => {
    await addToSchema(
      [{ id: -9, data_source_id: sourceId, name: 'ещё продажи', schema: 'public', table }],
      [{ id: -10, object_id: -9, name: 'mid', column: 'id', primitive_type: 'integer' }],
    );
    const res = await dataOf('[ещё продажи.mid]');
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/^Извлечение данных устарело: в нём нет объекта «ещё продажи»/);
    expect(failure(res).message).not.toMatch(/Catalog Error|o_\d/);
  });

  it('a synchronisation brings the new field and object in', async () => {
    await runExtract(api, owner(), datasetId);
    expect((await dataOf('[sales.Количество]')).status).toBe(200);
    expect((await dataOf('[ещё продажи.mid]')).status).toBe(200);
  });
});
