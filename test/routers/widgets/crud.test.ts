import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type WidgetPage,
  type WidgetView,
} from './world';

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;

const body = (over: Record<string, unknown> = {}) => ({
  name: 'Выручка по регионам',
  type: 'bar',
  dataset_id: datasetId,
  rows: [{ id: 'region', alias: 'Регион', sql: '[regions.name]' }],
  columns: [{ id: 'total', alias: 'Выручка', sql: 'SUM([sales.amount])' }],
  filters: [{ sql: '[sales.product]', op: 'in', values: ['чай'], value_type: 'string' }],
  sorts: [{ field_id: 'total', direction: 'desc' }],
  ...over,
});

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(20));
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = (
    await createSalesDataset(api, cast.tokens.wsAdmin!, { workspaceId: cast.workspaceId, sourceId: source, tables })
  ).id;
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('POST /api/widget', () => {
  it("creates a widget in the dataset's workspace, authored by the caller", async () => {
    const res = await api.post('/api/widget', body(), cast.tokens.editor);
    expect(res.status).toBe(200);
    expect(ok<WidgetView>(res)).toMatchObject({
      name: 'Выручка по регионам',
      type: 'bar',
      dataset_id: datasetId,
      workspace_id: cast.workspaceId,
      author_id: cast.users.editor.id,
      rows: [{ id: 'region', alias: 'Регион', sql: '[regions.name]' }],
      series: [],
      columns: [{ id: 'total', alias: 'Выручка', sql: 'SUM([sales.amount])' }],
      filters: [{ sql: '[sales.product]', op: 'in', values: ['чай'], value_type: 'string' }],
      sorts: [{ field_id: 'total', direction: 'desc' }],
      calculated_fields: [],
    });
    const got = await api.get(`/api/widget/${ok<WidgetView>(res).id}`, cast.tokens.viewer);
    expect(ok<WidgetView>(got)).toEqual(ok<WidgetView>(res));
  });

  it('checks the configuration by compiling it', async () => {
    const bad = await api.post(
      '/api/widget',
      body({ columns: [{ id: 'total', sql: 'SUM([sales.product])' }] }),
      cast.tokens.editor,
    );
    expect(bad.status).toBe(422);
    expect(failure(bad).message).toBe('Ошибка валидации');
    expect(failure(bad).errors!['columns[0].sql']).toMatch(/функции SUM должен быть типа «число»/);

    const sort = await api.post(
      '/api/widget',
      body({ sorts: [{ field_id: 'nope', direction: 'asc' }] }),
      cast.tokens.editor,
    );
    expect([sort.status, failure(sort).errors]).toEqual([
      422,
      { 'sorts[0].fieldId': 'Поле с id nope не найдено на полках виджета' },
    ]);

    // Rule 2: the request must carry the definition, even though the dataset has a field of that name.
    const calc = await api.post(
      '/api/widget',
      body({ columns: [{ id: 'total', sql: '[Выручка]' }] }),
      cast.tokens.editor,
    );
    expect([calc.status, failure(calc).message]).toEqual([400, 'Определение вычисляемого поля не найдено: Выручка']);
    const withDef = await api.post(
      '/api/widget',
      body({
        columns: [{ id: 'total', sql: '[Выручка]' }],
        calculated_fields: [
          { id: '9', name: 'Выручка', alias: 'Выручка', primitive_type: 'float', sql: 'SUM([sales.amount])' },
        ],
      }),
      cast.tokens.editor,
    );
    expect(withDef.status).toBe(200);
    expect(ok<WidgetView>(withDef).calculated_fields).toHaveLength(1);

    // Data: the saved shelves come with their saved definitions; shelves sent in the request need their own.
    const wid = ok<WidgetView>(withDef).id;
    expect((await api.post(`/api/widget/${wid}/data`, {}, cast.tokens.editor)).status).toBe(200);
    const replaced = await api.post(
      `/api/widget/${wid}/data`,
      { columns: [{ id: 't2', sql: '[Выручка]' }] },
      cast.tokens.editor,
    );
    expect([replaced.status, failure(replaced).message]).toEqual([
      400,
      'Определение вычисляемого поля не найдено: Выручка',
    ]);
  });

  it('validates the body', async () => {
    const res = await api.post(
      '/api/widget',
      {
        name: ' ',
        type: 'radar',
        dataset_id: 'x',
        rows: [{ alias: 'no id' }],
        sorts: [{ field_id: 'a', direction: 'up' }],
      },
      cast.tokens.editor,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      name: 'must not be blank',
      type: 'must be one of: table, pivot, bar, line, area, pie, scatter, kpi',
      datasetId: 'must be a number',
      'rows[0].id': 'must not be blank',
      'sorts[0].direction': 'must be one of: asc, desc',
    });
    expect((await api.post('/api/widget', body())).status).toBe(401);
  });

  it('needs an editing role where the dataset lives; an unreadable dataset does not exist', async () => {
    expect((await api.post('/api/widget', body(), cast.tokens.viewer)).status).toBe(403);
    const outsider = await api.post('/api/widget', body(), cast.tokens.plain);
    expect([outsider.status, failure(outsider).message]).toEqual([404, `Датасет не найден (id ${datasetId})`]);
    // a system administrator reads every workspace but edits only where they have a role
    expect((await api.post('/api/widget', body(), cast.tokens.sysadmin)).status).toBe(403);
  });
});

describe('GET, PUT, DELETE /api/widget/{id}', () => {
  it('404 «Виджет не найден (id …)» for a missing widget and for one in an unreadable workspace', async () => {
    const missing = await api.get('/api/widget/999999', cast.tokens.viewer);
    expect([missing.status, failure(missing).message]).toEqual([404, 'Виджет не найден (id 999999)']);
    const w = ok<WidgetView>(await api.post('/api/widget', body(), cast.tokens.editor));
    const hidden = await api.get(`/api/widget/${w.id}`, cast.tokens.plain);
    expect([hidden.status, failure(hidden).message]).toEqual([404, `Виджет не найден (id ${w.id})`]);
    expect((await api.post(`/api/widget/${w.id}/data`, {}, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(`/api/widget/${w.id}`, cast.tokens.sysadmin)).status).toBe(200);
  });

  it('the owner (author or Администратор) replaces the configuration; every save moves updated_at', async () => {
    const w = ok<WidgetView>(await api.post('/api/widget', body(), cast.tokens.editor));
    await new Promise((r) => setTimeout(r, 5));
    const renamed = await api.put(
      `/api/widget/${w.id}`,
      body({ name: 'Другое', type: 'kpi', rows: [], sorts: [], filters: [] }),
      cast.tokens.editor,
    );
    expect(renamed.status).toBe(200);
    expect(ok<WidgetView>(renamed)).toMatchObject({
      name: 'Другое',
      type: 'kpi',
      rows: [],
      filters: [],
      author_id: cast.users.editor.id,
    });
    expect(ok<WidgetView>(renamed).updated_at > w.updated_at).toBe(true);
    expect(ok<WidgetView>(renamed).created_at).toBe(w.created_at);
    // the same body again: still a save
    await new Promise((r) => setTimeout(r, 5));
    const again = await api.put(
      `/api/widget/${w.id}`,
      body({ name: 'Другое', type: 'kpi', rows: [], sorts: [], filters: [] }),
      cast.tokens.wsAdmin,
    );
    expect(ok<WidgetView>(again).updated_at > ok<WidgetView>(renamed).updated_at).toBe(true);
    // not the author and not Администратор: 403; a viewer: 403; an outsider: 404
    const other = await api.post('/api/widget', body(), cast.tokens.wsAdmin);
    expect((await api.put(`/api/widget/${ok<WidgetView>(other).id}`, body(), cast.tokens.editor)).status).toBe(403);
    expect((await api.put(`/api/widget/${w.id}`, body(), cast.tokens.viewer)).status).toBe(403);
    expect((await api.put(`/api/widget/${w.id}`, body(), cast.tokens.plain)).status).toBe(404);
    // an invalid configuration is refused and nothing changes
    expect(
      (await api.put(`/api/widget/${w.id}`, body({ columns: [{ id: 'x', sql: 'SUM(' }] }), cast.tokens.editor)).status,
    ).toBe(422);
    expect(ok<WidgetView>(await api.get(`/api/widget/${w.id}`, cast.tokens.editor)).name).toBe('Другое');
  });

  it('deletes for the owner only', async () => {
    const w = ok<WidgetView>(await api.post('/api/widget', body(), cast.tokens.editor));
    expect((await api.delete(`/api/widget/${w.id}`, cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(`/api/widget/${w.id}`, cast.tokens.plain)).status).toBe(404);
    const res = await api.delete(`/api/widget/${w.id}`, cast.tokens.wsAdmin);
    expect(res.body).toEqual({ success: true, data: { id: w.id, deleted: true } });
    expect((await api.get(`/api/widget/${w.id}`, cast.tokens.editor)).status).toBe(404);
    expect((await api.delete(`/api/widget/${w.id}`, cast.tokens.wsAdmin)).status).toBe(404);
  });
});

describe('GET /api/widget', () => {
  it('lists the readable widgets with the standard parameters', async () => {
    const ws = await cast.newWorkspace();
    const source = await createPgSource(t.deps, ws, cast.users.wsAdmin.id);
    const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, { workspaceId: ws, sourceId: source, tables });
    const make = (name: string, type: string, token: string) =>
      api.post(
        '/api/widget',
        body({ name, type, dataset_id: ds.id, ...(type === 'kpi' ? { rows: [], sorts: [] } : {}) }),
        token,
      );
    const a = ok<WidgetView>(await make('Альфа продажи', 'bar', cast.tokens.editor!));
    const b = ok<WidgetView>(await make('Бета', 'kpi', cast.tokens.wsAdmin!));
    const c = ok<WidgetView>(await make('Гамма продажи', 'line', cast.tokens.editor!));

    const all = await api.get('/api/widget', cast.tokens.viewer, { workspaceId: String(ws), sort: 'name,asc' });
    expect(all.status).toBe(200);
    expect(ok<WidgetPage>(all).content.map((w) => w.id)).toEqual([a.id, b.id, c.id]);
    expect(ok<WidgetPage>(all).page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });

    const page = await api.get('/api/widget', cast.tokens.viewer, {
      workspaceId: String(ws),
      sort: 'name,desc',
      size: '2',
      page: '1',
    });
    expect(ok<WidgetPage>(page).content.map((w) => w.id)).toEqual([a.id]);
    expect(ok<WidgetPage>(page).page).toEqual({ size: 2, number: 1, total_elements: 3, total_pages: 2 });

    const ids = async (q: Record<string, string>) =>
      ok<WidgetPage>(
        await api.get('/api/widget', cast.tokens.viewer, { workspaceId: String(ws), sort: 'id,asc', ...q }),
      ).content.map((w) => w.id);
    expect(await ids({ type: 'kpi' })).toEqual([b.id]);
    expect(await ids({ author: String(cast.users.editor.id) })).toEqual([a.id, c.id]);
    expect(await ids({ query: 'ПРОДАЖИ' })).toEqual([a.id, c.id]);
    expect(await ids({ createdAtFrom: b.created_at })).toEqual([b.id, c.id]);
    expect(await ids({ createdAtTo: '2000-01-01' })).toEqual([]);
    expect(await ids({ updatedAtFrom: '2000-01-01', updatedAtTo: '2999-12-31' })).toEqual([a.id, b.id, c.id]);

    // an outsider sees none of them
    const outsider = await api.get('/api/widget', cast.tokens.plain, { workspaceId: String(ws) });
    expect(ok<WidgetPage>(outsider).page.total_elements).toBe(0);

    const bad = await api.get('/api/widget', cast.tokens.viewer, { sort: 'secret,asc', type: 'radar', size: '100000' });
    expect(bad.status).toBe(422);
    expect(Object.keys(failure(bad).errors!).sort()).toEqual(['size', 'sort', 'type']);
  });
});
