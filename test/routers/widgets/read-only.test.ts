import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import type { z } from 'zod';
import type { datasetPreviewOutput, fieldValuesOutput } from '../../../routers/datasets/data-procedures';
import { failure, ok } from '../../support/rest';
import type { DatasetDetails } from '../datasets/helpers';
import { createPgSource, sourceDb, type WidgetView } from './world';

type DatasetPreview = z.output<typeof datasetPreviewOutput>;
type FieldValues = z.output<typeof fieldValuesOutput>;

/*
 * The query engine only reads. A dataset's `sql` object whose SELECT has a side effect (a sequence step, a function
 * that inserts) fails when a viewer reads a widget or a preview of the dataset, and nothing on the source changes.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let sourceId: number;
const seq = uniq('w_seq');
const log = uniq('w_log');
const writer = uniq('w_writer');

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE SEQUENCE ${seq}`);
  await db.query(`CREATE TABLE ${log} (id int)`);
  await db.query(`INSERT INTO ${log} VALUES (1), (2)`);
  await db.query(
    `CREATE FUNCTION ${writer}() RETURNS int LANGUAGE plpgsql VOLATILE AS $$ BEGIN INSERT INTO ${log} VALUES (99); RETURN 1; END $$`,
  );
  // The administrator wrote the source: they own it and may give a dataset SQL objects on it.
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
});
afterAll(async () => {
  await db.query(`DROP FUNCTION IF EXISTS ${writer}()`);
  await db.query(`DROP TABLE IF EXISTS ${log}`);
  await db.query(`DROP SEQUENCE IF EXISTS ${seq}`);
  await db.end();
});

/** A dataset of one SQL object with one integer column `n`; returns its id and the field's id. */
async function sqlDataset(sql: string) {
  const token = cast.tokens.wsAdmin!;
  const created = await api.post(
    '/api/dataset',
    { name: uniq('ds'), workspace_id: cast.workspaceId, live: true, data_source_ids: [sourceId] },
    token,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = ok<DatasetDetails>(created).id as number;
  const saved = await api.put(
    `/api/dataset/${id}/schema`,
    {
      objects: [{ id: -1, data_source_id: sourceId, kind: 'sql', name: 'q', sql }],
      fields: [{ id: -2, object_id: -1, column: 'n', primitive_type: 'integer' }],
      relations: [],
      hierarchies: [],
      filters: [],
      parameters: [],
    },
    token,
  );
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  return { id, fieldId: ok<DatasetDetails>(saved).fields[0].id as number };
}

/** Widget data, widget preview, dataset preview and field values, each as the viewer. */
async function readEveryWay(ds: { id: number; fieldId: number }) {
  const shelves = { rows: [{ id: 'n', sql: '[q.n]' }], columns: [{ id: 'c', sql: 'COUNT()' }] };
  const widget = await api.post(
    '/api/widget',
    { name: 'w', type: 'table', dataset_id: ds.id, ...shelves },
    cast.tokens.editor,
  );
  expect(widget.status, JSON.stringify(widget.body)).toBe(200);
  return [
    await api.post(`/api/widget/${ok<WidgetView>(widget).id}/data`, {}, cast.tokens.viewer),
    await api.post('/api/widget/preview', { dataset_id: ds.id, ...shelves }, cast.tokens.viewer),
    await api.post(`/api/dataset/${ds.id}/preview`, { limit: 5 }, cast.tokens.viewer),
    await api.get(`/api/dataset/${ds.id}/field-values`, cast.tokens.viewer, { fieldId: String(ds.fieldId) }),
  ];
}

const sequenceState = async () => (await db.query(`SELECT last_value::int AS v, is_called FROM ${seq}`)).rows[0];
const logRows = async () => (await db.query(`SELECT id FROM ${log} ORDER BY id`)).rows.map((r) => r.id as number);

describe('a dataset SQL object with a side effect', () => {
  it('does not advance a sequence when its data is read', async () => {
    const ds = await sqlDataset(`SELECT nextval('${seq}')::int AS n`);
    const before = await sequenceState();
    for (const res of await readEveryWay(ds)) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(failure(res).message).toMatch(/cannot execute nextval\(\) in a read-only transaction/);
    }
    expect(await sequenceState()).toEqual(before);
  });

  it('does not insert through a function that writes', async () => {
    const ds = await sqlDataset(`SELECT ${writer}() AS n`);
    for (const res of await readEveryWay(ds)) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(failure(res).message).toMatch(/cannot execute INSERT in a read-only transaction/);
    }
    expect(await logRows()).toEqual([1, 2]);
  });

  it('while a SQL object that only reads answers every way', async () => {
    const ds = await sqlDataset(`SELECT id AS n FROM ${log}`);
    const [data, preview, datasetPreview, values] = await readEveryWay(ds);
    for (const res of [data, preview, datasetPreview, values]) expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ok<FieldValues>(values).values).toEqual([1, 2]);
    expect(ok<DatasetPreview>(datasetPreview).rows).toHaveLength(2);
  });
});
