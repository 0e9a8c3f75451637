import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataSources } from '../../../db/schema/data-sources';
import { datasets } from '../../../db/schema/datasets';
import { widgets } from '../../../db/schema/widgets';
import { useTestApp } from '../../support/app';
import {
  addWorkspaceMember,
  createRoleCast,
  createSharedWorkspace,
  createUser,
  login,
  uniq,
  type RoleCast,
} from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import { createDataset, emptySchema, insertSource, shopSchema, type DatasetDetails, type DatasetPage } from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;
let editor: string;
let sourceId: number;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  editor = cast.tokens.editor!;
  sourceId = await insertSource(t.deps, cast.workspaceId);
});

const inShared = (token = editor, extra: Record<string, unknown> = {}) =>
  createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId], ...extra });

describe('POST /api/dataset', () => {
  it('creates a dataset on sources with an empty schema, authored by the caller', async () => {
    const name = uniq('Заказы');
    const res = await api.post(
      '/api/dataset',
      { name, workspace_id: cast.workspaceId, live: false, data_source_ids: [sourceId] },
      editor,
    );
    expect(res.status).toBe(200);
    expect(ok<DatasetDetails>(res)).toMatchObject({
      name,
      description: '',
      workspace_id: cast.workspaceId,
      author_id: cast.users.editor.id,
      live: false,
      type: 'materialized',
      data_source_ids: [sourceId],
      version: 1,
      ...emptySchema,
    });
    expect(ok<DatasetDetails>(res).id).toBeGreaterThan(0);
  });

  it('puts a dataset without workspace_id into the personal workspace; live defaults to true', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const own = await insertSource(t.deps, u.personalWorkspaceId);
    const res = await api.post('/api/dataset', { name: 'Личный', data_source_ids: [own] }, token);
    expect(res.status).toBe(200);
    expect(ok<DatasetDetails>(res)).toMatchObject({ workspace_id: u.personalWorkspaceId, live: true, type: 'live' });
  });

  it('answers 422 at dataSourceIds[i] for unknown sources and sources the caller cannot read', async () => {
    const hidden = await createSharedWorkspace(t.deps, []);
    const hiddenSource = await insertSource(t.deps, hidden);
    const res = await api.post(
      '/api/dataset',
      { name: 'x', workspace_id: cast.workspaceId, data_source_ids: [sourceId, 987654, hiddenSource] },
      editor,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'dataSourceIds[1]': 'Источник данных не найден (id 987654)',
      'dataSourceIds[2]': `Источник данных не найден (id ${hiddenSource})`,
    });
    // A system administrator reads every source, but an unknown one is still unknown (not a 500 at the insert).
    const asAdmin = await api.post('/api/dataset', { name: 'x', data_source_ids: [987654] }, cast.tokens.sysadmin);
    expect(asAdmin.status).toBe(422);
    expect(failure(asAdmin).errors).toEqual({ 'dataSourceIds[0]': 'Источник данных не найден (id 987654)' });
    const blank = await api.post('/api/dataset', { name: '  ', live: 'yes' }, editor);
    expect(blank.status).toBe(422);
    expect(failure(blank).errors).toEqual({ name: 'must not be blank', live: 'must be a boolean' });
  });

  it('needs an editing role in the target workspace', async () => {
    const body = { name: 'x', workspace_id: cast.workspaceId, data_source_ids: [sourceId] };
    const statuses: Record<string, number> = {};
    for (const role of ['anonymous', 'plain', 'viewer', 'editor', 'wsAdmin', 'sysadmin'] as const) {
      statuses[role] = (await api.post('/api/dataset', body, cast.tokens[role])).status;
    }
    expect(statuses).toEqual({ anonymous: 401, plain: 404, viewer: 403, editor: 200, wsAdmin: 200, sysadmin: 403 });
  });
});

describe('GET /api/dataset/{id}', () => {
  it('answers members of the workspace and system administrators; 404 «Датасет не найден» to everyone else', async () => {
    const ds = await inShared();
    const statuses: Record<string, number> = {};
    for (const role of ['anonymous', 'plain', 'viewer', 'editor', 'wsAdmin', 'manager', 'sysadmin'] as const) {
      statuses[role] = (await api.get(`/api/dataset/${ds.id}`, cast.tokens[role])).status;
    }
    expect(statuses).toEqual({
      anonymous: 401,
      plain: 404,
      viewer: 200,
      editor: 200,
      wsAdmin: 200,
      manager: 404,
      sysadmin: 200,
    });
    const hidden = await api.get(`/api/dataset/${ds.id}`, cast.tokens.plain);
    expect(failure(hidden)).toMatchObject({ code: 404, message: `Датасет не найден (id ${ds.id})` });
    expect(failure(await api.get('/api/dataset/99999999', editor)).message).toBe('Датасет не найден (id 99999999)');
    expect((await api.get('/api/dataset/abc', editor)).status).toBe(422);
  });
});

describe('PUT /api/dataset/{id}', () => {
  it('changes name, description, mode and sources, leaving the schema; bumps version and edit time', async () => {
    const ds = await inShared();
    const saved = ok<DatasetDetails>(await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(sourceId), editor));
    const second = await insertSource(t.deps, cast.workspaceId);
    const res = await api.put(
      `/api/dataset/${ds.id}`,
      { name: 'Новое имя', description: 'Описание', live: false, data_source_ids: [second, sourceId] },
      editor,
    );
    expect(res.status).toBe(200);
    expect(ok<DatasetDetails>(res)).toMatchObject({
      name: 'Новое имя',
      description: 'Описание',
      live: false,
      type: 'materialized',
      data_source_ids: [second, sourceId],
    });
    expect(ok<DatasetDetails>(res).version).toBe(saved.version + 1);
    expect(Date.parse(ok<DatasetDetails>(res).updated_at)).toBeGreaterThan(Date.parse(saved.updated_at));
    expect(ok<DatasetDetails>(res).fields).toEqual(saved.fields);

    // Even a save without a real change counts as an edit (pipelines compare by edit time).
    const again = await api.put(`/api/dataset/${ds.id}`, {}, editor);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(ok<DatasetDetails>(again).version).toBe(ok<DatasetDetails>(res).version + 1);
  });

  it('refuses to take away a source that objects use, and unknown new sources', async () => {
    const ds = await inShared();
    await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(sourceId), editor);
    const used = await api.put(`/api/dataset/${ds.id}`, { data_source_ids: [] }, editor);
    expect(used.status).toBe(422);
    expect(failure(used).errors).toEqual({
      dataSourceIds: `Источник данных используется объектами датасета (id ${sourceId})`,
    });
    const unknown = await api.put(`/api/dataset/${ds.id}`, { data_source_ids: [sourceId, 555555] }, editor);
    expect(failure(unknown).errors).toEqual({ 'dataSourceIds[1]': 'Источник данных не найден (id 555555)' });
    const empty = await inShared();
    expect(
      ok<DatasetDetails>(await api.put(`/api/dataset/${empty.id}`, { data_source_ids: [] }, editor)).data_source_ids,
    ).toEqual([]);
  });

  it('lets the author and the workspace Администратор change it; others get 403 or 404', async () => {
    const ds = await inShared();
    const statuses: Record<string, number> = {};
    for (const role of ['anonymous', 'plain', 'viewer', 'editor', 'wsAdmin', 'sysadmin'] as const) {
      statuses[role] = (await api.put(`/api/dataset/${ds.id}`, { name: uniq('n') }, cast.tokens[role])).status;
    }
    expect(statuses).toEqual({ anonymous: 401, plain: 404, viewer: 403, editor: 200, wsAdmin: 200, sysadmin: 403 });
    // A second editor is not the owner.
    const other = await createUser(t.deps);
    await addWorkspaceMember(t.deps, cast.workspaceId, { userId: other.id, role: 'Редактор' });
    const otherToken = await login(api, other.username, other.password);
    const refused = await api.put(`/api/dataset/${ds.id}`, { name: 'x' }, otherToken);
    expect(refused.status).toBe(403);
    expect(failure(refused).message).toBe('Доступ запрещён');
  });
});

describe('DELETE /api/dataset/{id}', () => {
  it('deletes a dataset with its schema; refuses (400) while widgets are built on it', async () => {
    const ds = await inShared();
    await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(sourceId), editor);
    const [widget] = await t.deps.db
      .insert(widgets)
      .values({ name: 'Выручка по городам', type: 'bar', datasetId: ds.id, workspaceId: cast.workspaceId })
      .returning();
    const refused = await api.delete(`/api/dataset/${ds.id}`, editor);
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toBe('Датасет используется виджетами (1): сначала удалите или перенастройте их');
    await t.deps.db.delete(widgets).where(eq(widgets.id, widget.id));

    expect((await api.delete(`/api/dataset/${ds.id}`, cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(`/api/dataset/${ds.id}`, cast.tokens.plain)).status).toBe(404);
    const res = await api.delete(`/api/dataset/${ds.id}`, editor);
    expect(res.status).toBe(200);
    expect(ok<Deleted>(res)).toEqual({ id: ds.id, deleted: true });
    expect((await api.get(`/api/dataset/${ds.id}`, editor)).status).toBe(404);
    expect((await api.delete(`/api/dataset/${ds.id}`, editor)).status).toBe(404);
  });
});

describe('deleting the workspace of a dataset', () => {
  it('deletes its datasets with their schemas and sources (no reference left behind)', async () => {
    const ws = await cast.newWorkspace();
    const src = await insertSource(t.deps, ws);
    const ds = await createDataset(api, cast.tokens.wsAdmin!, { workspace_id: ws, data_source_ids: [src] });
    expect((await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(src), cast.tokens.wsAdmin)).status).toBe(200);
    await t.deps.db.insert(widgets).values({ name: 'w', type: 'bar', datasetId: ds.id, workspaceId: ws });
    const res = await api.delete(`/api/workspaces/${ws}`, cast.tokens.wsAdmin);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.deps.db.select().from(datasets).where(eq(datasets.id, ds.id))).toEqual([]);
  });

  it('keeps a source that objects of a dataset use, even against a delete that skips the API checks', async () => {
    const ds = await inShared();
    await api.put(`/api/dataset/${ds.id}/schema`, shopSchema(sourceId), editor);
    await expect(t.deps.db.delete(dataSources).where(eq(dataSources.id, sourceId))).rejects.toThrow();
    expect(ok<DatasetDetails>(await api.get(`/api/dataset/${ds.id}`, editor)).data_source_ids).toEqual([sourceId]);
  });
});

describe('GET /api/dataset', () => {
  it('lists datasets of readable workspaces with the filters of the specification', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const ws = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Администратор' }]);
    const src = await insertSource(t.deps, ws);
    const tag = uniq('list');
    const a = await createDataset(api, token, { name: `${tag} Альфа`, workspace_id: ws, data_source_ids: [src] });
    const b = await createDataset(api, token, { name: `${tag} Бета`, workspace_id: ws, live: false });
    const c = await createDataset(api, token, { name: `${tag} Гамма` });
    const foreign = await inShared(editor, { name: `${tag} чужой` });

    const res = await api.get('/api/dataset', token, { query: tag });
    expect(res.status).toBe(200);
    const all = ok<DatasetPage>(res);
    // Recently changed first.
    expect(all.content.map((d) => d.id)).toEqual([c.id, b.id, a.id]);
    expect(all.page).toEqual({ size: 20, number: 0, total_elements: 3, total_pages: 1 });
    expect(all.content[2]).toMatchObject({ data_source_ids: [src], type: 'live', author_id: u.id });
    expect(all.content.find((d) => d.id === foreign.id)).toBeUndefined();

    const ids = async (query: Record<string, string>) =>
      ok<DatasetPage>(await api.get('/api/dataset', token, { query: tag, ...query })).content.map((d) => d.id);
    expect(await ids({ type: 'materialized' })).toEqual([b.id]);
    expect(await ids({ type: 'live', sort: 'name,asc' })).toEqual([a.id, c.id]);
    expect(await ids({ workspaceId: String(ws), sort: 'name,desc' })).toEqual([b.id, a.id]);
    expect(await ids({ workspaceId: String(u.personalWorkspaceId) })).toEqual([c.id]);
    expect(await ids({ author: String(u.id), sort: 'id,asc' })).toEqual([a.id, b.id, c.id]);
    expect(await ids({ author: String(cast.users.editor.id) })).toEqual([]);
    expect(await ids({ query: `${tag} бет` })).toEqual([b.id]);

    const page = ok<DatasetPage>(
      await api.get('/api/dataset', token, { query: tag, size: '2', page: '1', sort: 'id,asc' }),
    );
    expect(page.content.map((d) => d.id)).toEqual([c.id]);
    expect(page.page).toEqual({ size: 2, number: 1, total_elements: 3, total_pages: 2 });

    expect((await api.get('/api/dataset', token, { sort: 'secret,asc' })).status).toBe(422);
    expect((await api.get('/api/dataset', token, { type: 'cube' })).status).toBe(422);
    expect(failure(await api.get('/api/dataset', token, { createdAtFrom: 'вчера' })).errors).toEqual({
      createdAtFrom: 'must be an ISO 8601 date (2026-03-01) or date-time (2026-03-01T10:00:00Z)',
    });
    const hiddenWs = await api.get('/api/dataset', token, { workspaceId: String(cast.workspaceId) });
    expect(hiddenWs.status).toBe(404);
    expect((await api.get('/api/dataset')).status).toBe(401);
  });

  it('filters by creation and change time (a date bound covers the whole day)', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const old = await createDataset(api, token, { name: 'old' });
    const fresh = await createDataset(api, token, { name: 'fresh' });
    await t.deps.db
      .update(datasets)
      .set({ createdAt: new Date('2024-03-10T12:00:00Z'), updatedAt: new Date('2024-03-11T08:00:00Z') })
      .where(eq(datasets.id, old.id));
    const ids = async (query: Record<string, string>) =>
      ok<DatasetPage>(await api.get('/api/dataset', token, { ...query, sort: 'id,asc' })).content.map((d) => d.id);
    expect(await ids({ createdAtFrom: '2024-03-10', createdAtTo: '2024-03-10' })).toEqual([old.id]);
    expect(await ids({ createdAtTo: '2024-03-09' })).toEqual([]);
    expect(await ids({ createdAtFrom: '2024-03-11' })).toEqual([fresh.id]);
    expect(await ids({ updatedAtFrom: '2024-03-11T07:59:59Z', updatedAtTo: '2024-03-11T08:00:00Z' })).toEqual([old.id]);
    expect(await ids({ updatedAtFrom: '2024-03-11T08:00:00.001Z', updatedAtTo: '2024-03-12' })).toEqual([]);
  });

  it('shows a system administrator every dataset', async () => {
    const ds = await inShared();
    const res = await api.get('/api/dataset', cast.tokens.sysadmin, { query: ds.name });
    expect(ok<DatasetPage>(res).content.map((d) => d.id)).toEqual([ds.id]);
  });
});
