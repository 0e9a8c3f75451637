import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { widgets } from '../../../db/schema/widgets';
import { useTestApp } from '../../support/app';
import { createRoleCast, createSharedWorkspace, type RoleCast } from '../../support/factories';
import { byName, createDataset, emptySchema, insertSource, shopSchema } from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;
let editor: string;
let sourceId: number;
let dir: string;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  editor = cast.tokens.editor!;
  sourceId = await insertSource(t.deps, cast.workspaceId, { name: 'Магазин' });
  dir = await mkdtemp(join(tmpdir(), 'dataset-tools-'));
});
afterAll(async () => {
  await t.deps.connectors.closeAll();
  await rm(dir, { recursive: true, force: true });
});

/** A dataset with the shop schema saved; answers the saved dataset. */
async function shop(token = editor) {
  const ds = await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] });
  const res = await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(sourceId), token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe('POST /api/dataset/{id}/formula/validate', () => {
  it('answers valid with the type, or the expression error as message', async () => {
    const ds = await shop();
    const check = (body: Record<string, unknown>, token = editor) =>
      api.post(`/api/dataset/${ds.id}/formula/validate`, body, token);
    const ok = await check({ formula: '[Выручка] / SUM([orders.amount]) * [Порог]' });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ valid: true, primitive_type: 'float', aggregate: true, message: null });
    expect((await check({ formula: 'UPPER([customers.city])' })).body.data).toEqual({
      valid: true,
      primitive_type: 'string',
      aggregate: false,
      message: null,
    });

    const unknown = await check({ formula: '[orders.nope] + 1' });
    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toEqual({
      valid: false,
      primitive_type: null,
      aggregate: null,
      message: 'Ошибка в выражении: поле [orders.nope] не найдено в датасете (строка 1, позиция 1)',
    });
    expect((await check({ formula: '' })).body.data).toMatchObject({
      valid: false,
      message: 'Ошибка в выражении: пустое выражение',
    });
    expect((await check({ formula: '[customers.city] + 1' })).body.data.message).toBe(
      'Ошибка в выражении: оператор + складывает только числа; строки соединяет функция CONCAT (строка 1, позиция 1)',
    );
  });

  it('checks the new formula of a saved field for cycles through it', async () => {
    const ds = await shop();
    const revenue = byName(ds.fields, 'Выручка');
    const res = await api.post(
      `/api/dataset/${ds.id}/formula/validate`,
      { formula: '[Средний чек] * 2', field_id: revenue.id },
      editor,
    );
    expect(res.body.data.valid).toBe(false);
    expect(res.body.data.message).toMatch(
      /^Ошибка в выражении: циклическая ссылка между вычисляемыми полями: \[Выручка\] → \[Средний чек\] → \[Выручка\]/,
    );
    const physical = byName(ds.fields, 'city');
    const refused = await api.post(
      `/api/dataset/${ds.id}/formula/validate`,
      { formula: '1', field_id: physical.id },
      editor,
    );
    expect(refused.status).toBe(422);
    expect(refused.body.error.errors).toEqual({ fieldId: `Поле датасета не найдено (id ${physical.id})` });
  });

  it('needs the owner', async () => {
    const ds = await shop();
    const call = (token: string | undefined) =>
      api.post(`/api/dataset/${ds.id}/formula/validate`, { formula: '1' }, token);
    expect((await call(undefined)).status).toBe(401);
    expect((await call(cast.tokens.plain)).status).toBe(404);
    expect((await call(cast.tokens.viewer)).status).toBe(403);
    expect((await call(cast.tokens.wsAdmin)).status).toBe(200);
    expect((await api.post(`/api/dataset/${ds.id}/formula/validate`, {}, editor)).body.error.errors).toEqual({
      formula: 'must not be blank',
    });
  });
});

describe('POST /api/dataset/{id}/relations/suggest', () => {
  it('proposes joins between saved objects by key names, naming their fields', async () => {
    const ds = await createDataset(api, editor, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] });
    const schema = shopSchema(sourceId);
    schema.relations = [];
    const saved = (await api.put(`/api/dataset/${ds.id}/schema`, schema, editor)).body.data;
    const orders = byName(saved.objects, 'orders');
    const customers = byName(saved.objects, 'customers');
    const field = (objectId: number, name: string) =>
      saved.fields.find((f: any) => f.object_id === objectId && f.name === name).id;
    const res = await api.post(`/api/dataset/${ds.id}/relations/suggest`, {}, editor);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.relations).toEqual([
      {
        left_object_id: orders.id,
        right_object_id: customers.id,
        join_type: 'left',
        conditions: [
          {
            left_field_id: field(orders.id, 'customer_id'),
            right_field_id: field(customers.id, 'id'),
            left_column: 'customer_id',
            right_column: 'id',
          },
        ],
        reason: 'key_name',
      },
    ]);
  });

  it('proposes joins for new objects (temporary ids) from given columns and new fields; skips related pairs', async () => {
    const ds = await shop();
    const orders = byName(ds.objects, 'orders');
    const res = await api.post(
      `/api/dataset/${ds.id}/relations/suggest`,
      {
        objects: [
          { id: orders.id },
          {
            id: -1,
            data_source_id: sourceId,
            name: 'order_items',
            table: 'order_items',
            columns: ['id', 'order_id', 'product_id', 'qty'],
          },
          { id: -2, name: 'products', table: 'products', columns: ['id', 'title'] },
          { id: -3, name: 'returns', table: 'returns', columns: ['product_id', 'reason'] },
          { id: byName(ds.objects, 'customers').id },
        ],
        fields: [{ id: -100, object_id: -1, column: 'order_id' }],
      },
      editor,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const orderKey = ds.fields.find((f: any) => f.object_id === orders.id && f.name === 'id').id;
    expect(res.body.data.relations).toEqual([
      {
        left_object_id: -1,
        right_object_id: orders.id,
        join_type: 'left',
        conditions: [{ left_field_id: -100, right_field_id: orderKey, left_column: 'order_id', right_column: 'id' }],
        reason: 'key_name',
      },
      {
        left_object_id: -1,
        right_object_id: -2,
        join_type: 'left',
        conditions: [{ left_field_id: null, right_field_id: null, left_column: 'product_id', right_column: 'id' }],
        reason: 'key_name',
      },
      {
        left_object_id: -3,
        right_object_id: -2,
        join_type: 'left',
        conditions: [{ left_field_id: null, right_field_id: null, left_column: 'product_id', right_column: 'id' }],
        reason: 'key_name',
      },
      // orders -> customers is saved already; order_items and returns share product_id but are both linked to products.
      {
        left_object_id: -1,
        right_object_id: -3,
        join_type: 'left',
        conditions: [
          { left_field_id: null, right_field_id: null, left_column: 'product_id', right_column: 'product_id' },
        ],
        reason: 'shared_key',
      },
    ]);
    const bad = await api.post(
      `/api/dataset/${ds.id}/relations/suggest`,
      { objects: [{ id: 424242 }, { id: -1, name: 'x' }, { id: -2, data_source_id: 999, table: 't' }] },
      editor,
    );
    expect(bad.status).toBe(422);
    expect(bad.body.error.errors).toEqual({
      'objects[0].id': 'Объект датасета не найден (id 424242)',
      'objects[1].table': 'must not be blank',
      'objects[2].dataSourceId': 'Источник данных не подключён к датасету (id 999)',
    });
  });

  it("reads the columns of new tables from the source's metadata", async () => {
    const path = join(dir, 'shop.duckdb');
    const instance = await DuckDBInstance.create(path);
    const conn = await instance.connect();
    await conn.run('CREATE TABLE sales (id INTEGER, store_id INTEGER, amount DOUBLE)');
    await conn.run('CREATE TABLE stores (id INTEGER, city VARCHAR)');
    conn.closeSync();
    instance.closeSync();
    const fileSource = await insertSource(t.deps, cast.workspaceId, {
      type: 'file',
      settings: { file: { duckdb_path: path, tables: ['sales', 'stores'] } },
    });
    const ds = await createDataset(api, editor, { workspace_id: cast.workspaceId, data_source_ids: [fileSource] });
    const res = await api.post(
      `/api/dataset/${ds.id}/relations/suggest`,
      {
        objects: [
          { id: -1, data_source_id: fileSource, name: 'sales', table: 'sales' },
          { id: -2, data_source_id: fileSource, name: 'stores', table: 'stores' },
          { id: -3, data_source_id: fileSource, name: 'ghost', table: 'no_such_table' },
        ],
      },
      editor,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.relations).toEqual([
      {
        left_object_id: -1,
        right_object_id: -2,
        join_type: 'left',
        conditions: [{ left_field_id: null, right_field_id: null, left_column: 'store_id', right_column: 'id' }],
        reason: 'key_name',
      },
    ]);
  });

  it('needs the owner', async () => {
    const ds = await shop();
    expect((await api.post(`/api/dataset/${ds.id}/relations/suggest`, {}, cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(`/api/dataset/${ds.id}/relations/suggest`, {}, cast.tokens.plain)).status).toBe(404);
    expect((await api.post(`/api/dataset/${ds.id}/relations/suggest`, {})).status).toBe(401);
  });
});

describe('GET /api/dataset/{id}/dependencies', () => {
  it('lists the sources it uses and the widgets built on it', async () => {
    const ds = await shop();
    const empty = await api.get(`/api/dataset/${ds.id}/dependencies`, cast.tokens.viewer);
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual({
      data_sources: [{ id: sourceId, name: 'Магазин', type: 'postgresql', workspace_id: cast.workspaceId }],
      widgets: [],
      dashboards: [],
      hidden_count: 0,
    });
    const [w] = await t.deps.db
      .insert(widgets)
      .values({ name: 'KPI', type: 'kpi', datasetId: ds.id, workspaceId: cast.workspaceId })
      .returning();
    const res = await api.get(`/api/dataset/${ds.id}/dependencies`, editor);
    expect(res.body.data.widgets).toEqual([{ id: w.id, name: 'KPI', workspace_id: cast.workspaceId }]);
    expect((await api.get(`/api/dataset/${ds.id}/dependencies`, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(`/api/dataset/${ds.id}/dependencies`)).status).toBe(401);
  });

  it('names only what the caller can read: a view right on the dataset alone shows its users counted, not named', async () => {
    const ds = await shop();
    await t.deps.db
      .insert(widgets)
      .values({ name: 'Секретный KPI', type: 'kpi', datasetId: ds.id, workspaceId: cast.workspaceId });
    const granted = await api.put(
      `/api/access/dataset/${ds.id}/users/${cast.users.plain.id}`,
      { right: 'view' },
      editor,
    );
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const res = await api.get(`/api/dataset/${ds.id}/dependencies`, cast.tokens.plain);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ data_sources: [], widgets: [], dashboards: [], hidden_count: 2 });
    expect(JSON.stringify(res.body)).not.toContain('Секретный');
    // A member of the workspace reads them all.
    const member = await api.get(`/api/dataset/${ds.id}/dependencies`, cast.tokens.viewer);
    expect(member.body.data.widgets.map((w: { name: string }) => w.name)).toEqual(['Секретный KPI']);
    expect(member.body.data.hidden_count).toBe(0);
  });
});

describe('POST /api/dataset/{id}/copy', () => {
  it('duplicates the dataset with new ids and the same schema, remapping every reference', async () => {
    const original = await shop();
    const target = await cast.newWorkspace();
    const res = await api.post(`/api/dataset/${original.id}/copy`, { name: 'Копия', workspace_id: target }, editor);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const copy = res.body.data;
    expect(copy).toMatchObject({
      name: 'Копия',
      workspace_id: target,
      author_id: cast.users.editor.id,
      version: 1,
      data_source_ids: [sourceId],
    });
    expect(copy.id).not.toBe(original.id);

    // Same schema up to ids: map every id of the original to the copy's by position, then compare.
    const ids = new Map<string, number>();
    for (const block of ['objects', 'fields', 'relations', 'hierarchies', 'filters', 'parameters']) {
      original[block].forEach((x: any, i: number) => {
        expect(copy[block][i].id).not.toBe(x.id);
        ids.set(`${block}:${x.id}`, copy[block][i].id);
      });
    }
    const o = (id: number) => ids.get(`objects:${id}`);
    const f = (id: number | null) => (id === null ? null : ids.get(`fields:${id}`));
    const expected = {
      objects: original.objects.map((x: any) => ({ ...x, id: o(x.id) })),
      fields: original.fields.map((x: any) => ({
        ...x,
        id: f(x.id),
        object_id: x.object_id === null ? null : o(x.object_id),
        sort_by_field_id: f(x.sort_by_field_id),
        derivation: x.derivation ? { ...x.derivation, field_id: f(x.derivation.field_id) } : null,
      })),
      relations: original.relations.map((r: any) => ({
        ...r,
        id: ids.get(`relations:${r.id}`),
        left_object_id: o(r.left_object_id),
        right_object_id: o(r.right_object_id),
        conditions: r.conditions.map((c: any) => ({
          left_field_id: f(c.left_field_id),
          right_field_id: f(c.right_field_id),
        })),
      })),
      hierarchies: original.hierarchies.map((h: any) => ({
        ...h,
        id: ids.get(`hierarchies:${h.id}`),
        field_ids: h.field_ids.map(f),
      })),
      filters: original.filters.map((x: any) => ({ ...x, id: ids.get(`filters:${x.id}`), field_id: f(x.field_id) })),
      parameters: original.parameters.map((p: any) => ({ ...p, id: ids.get(`parameters:${p.id}`) })),
    };
    expect(copy).toMatchObject(expected);
    // The original is untouched.
    expect((await api.get(`/api/dataset/${original.id}`, editor)).body.data).toEqual(original);
  });

  it('defaults to the same workspace and «(копия)»; needs an editing role in the target', async () => {
    const original = await shop();
    const same = await api.post(`/api/dataset/${original.id}/copy`, {}, editor);
    expect(same.body.data).toMatchObject({ name: `${original.name} (копия)`, workspace_id: cast.workspaceId });
    // The owner of the original, but only Наблюдатель in the target: 403; a target they cannot see: 404.
    const readOnly = await createSharedWorkspace(t.deps, [{ userId: cast.users.editor.id, role: 'Наблюдатель' }]);
    const refused = await api.post(`/api/dataset/${original.id}/copy`, { workspace_id: readOnly }, editor);
    expect(refused.status).toBe(403);
    const hidden = await api.post(
      `/api/dataset/${original.id}/copy`,
      { workspace_id: cast.users.plain.personalWorkspaceId },
      editor,
    );
    expect(hidden.status).toBe(404);
    // A reader of the original is not its owner.
    expect((await api.post(`/api/dataset/${original.id}/copy`, {}, cast.tokens.viewer)).status).toBe(403);
    expect((await api.post(`/api/dataset/${original.id}/copy`, {}, cast.tokens.plain)).status).toBe(404);
    const empty = await createDataset(api, editor, { workspace_id: cast.workspaceId });
    const copiedEmpty = await api.post(`/api/dataset/${empty.id}/copy`, { name: 'e' }, editor);
    expect(copiedEmpty.body.data).toMatchObject({ name: 'e', data_source_ids: [], ...emptySchema });
  });
});
