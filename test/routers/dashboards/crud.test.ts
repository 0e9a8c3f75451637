import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createDashboardRow, createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import { postDashboard, type DashboardDetails, type DashboardPage, type DashboardView } from './world';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

describe('POST /api/dashboard', () => {
  it('creates an empty dashboard in the workspace, authored by the caller', async () => {
    const res = await api.post(
      '/api/dashboard',
      { name: '  Продажи  ', description: 'Итоги месяца', workspace_id: cast.workspaceId },
      cast.tokens.editor,
    );
    const created = ok<DashboardView>(res);
    expect(created).toMatchObject({
      name: 'Продажи',
      description: 'Итоги месяца',
      workspace_id: cast.workspaceId,
      author_id: cast.users.editor.id,
    });
    expect(created.uuid).toMatch(/^[0-9a-f-]{36}$/);
    const details = ok<DashboardDetails>(await api.get(`/api/dashboard/${created.id}`, cast.tokens.viewer));
    expect(details).toMatchObject({ id: created.id, name: 'Продажи', widget_ids: [] });
  });

  it('is refused to a Наблюдатель (403) and to a non-member (404 on the workspace)', async () => {
    const body = { name: 'x', workspace_id: cast.workspaceId };
    const viewer = await api.post('/api/dashboard', body, cast.tokens.viewer);
    expect(viewer.status).toBe(403);
    expect(failure(viewer).message).toBe('Доступ запрещён');
    const plain = await api.post('/api/dashboard', body, cast.tokens.plain);
    expect(plain.status).toBe(404);
  });

  it('answers 422 with the field path for a blank name or an unknown field', async () => {
    const res = await api.post(
      '/api/dashboard',
      { name: ' ', workspace_id: cast.workspaceId, x: 1 },
      cast.tokens.editor,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toMatchObject({ name: 'must not be blank', x: 'unknown field' });
  });
});

describe('GET /api/dashboard/{id}', () => {
  it('answers 404 with the dashboard message to a non-member, and for a missing id', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const other = await api.get(`/api/dashboard/${d.id}`, cast.tokens.plain);
    expect(other.status).toBe(404);
    expect(failure(other).message).toBe(`Дашборд не найден (id ${d.id})`);
    const missing = await api.get('/api/dashboard/2147483000', cast.tokens.sysadmin);
    expect(failure(missing).message).toBe('Дашборд не найден (id 2147483000)');
    // A system administrator reads any workspace.
    expect(ok<DashboardDetails>(await api.get(`/api/dashboard/${d.id}`, cast.tokens.sysadmin)).id).toBe(d.id);
  });
});

describe('PUT /api/dashboard/{id}', () => {
  it('renames and describes for the owner; updated_at moves; a left-out description is kept', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId, { description: 'раньше' });
    const renamed = ok<DashboardView>(
      await api.put(`/api/dashboard/${d.id}`, { name: 'Новое имя' }, cast.tokens.editor),
    );
    expect(renamed).toMatchObject({ name: 'Новое имя', description: 'раньше' });
    expect(Date.parse(renamed.updated_at)).toBeGreaterThan(Date.parse(d.updated_at));
    const described = ok<DashboardView>(
      await api.put(`/api/dashboard/${d.id}`, { name: 'Новое имя', description: '' }, cast.tokens.wsAdmin),
    );
    expect(described.description).toBe('');
  });

  it('is refused to a non-owner editor and a Наблюдатель (403), and to a non-member (404)', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const other = await createDashboardRow(t.deps, { workspaceId: cast.workspaceId, authorId: cast.users.wsAdmin.id });
    expect((await api.put(`/api/dashboard/${other.id}`, { name: 'x' }, cast.tokens.editor)).status).toBe(403);
    expect((await api.put(`/api/dashboard/${d.id}`, { name: 'x' }, cast.tokens.viewer)).status).toBe(403);
    expect((await api.put(`/api/dashboard/${d.id}`, { name: 'x' }, cast.tokens.plain)).status).toBe(404);
    expect(ok<DashboardDetails>(await api.get(`/api/dashboard/${d.id}`, cast.tokens.editor)).name).toBe(d.name);
  });
});

describe('DELETE /api/dashboard/{id}', () => {
  it('deletes for the owner; then 404', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    expect((await api.delete(`/api/dashboard/${d.id}`, cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(`/api/dashboard/${d.id}`, cast.tokens.plain)).status).toBe(404);
    expect(ok<Deleted>(await api.delete(`/api/dashboard/${d.id}`, cast.tokens.editor))).toEqual({
      id: d.id,
      deleted: true,
    });
    expect((await api.get(`/api/dashboard/${d.id}`, cast.tokens.editor)).status).toBe(404);
  });
});

describe('GET /api/dashboard (std list)', () => {
  it('lists what the caller can read, filtered by query, workspace, author and dates, sorted', async () => {
    const tag = uniq('list');
    const ws2 = await cast.newWorkspace();
    const a = await postDashboard(api, cast.tokens.editor, cast.workspaceId, { name: `${tag} Бета` });
    const b = await postDashboard(api, cast.tokens.wsAdmin, cast.workspaceId, { name: `${tag} альфа` });
    const c = await postDashboard(api, cast.tokens.editor, ws2, { name: `${tag} гамма` });

    const all = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, { query: tag, sort: 'name,asc' }),
    );
    expect(all.content.map((d) => d.id)).toEqual([b.id, a.id, c.id]);
    expect(all.page).toMatchObject({ number: 0, total_elements: 3 });

    const inWs = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, { query: tag, workspaceId: String(ws2) }),
    );
    expect(inWs.content.map((d) => d.id)).toEqual([c.id]);

    const byAuthor = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, {
        query: tag,
        author: String(cast.users.wsAdmin.id),
      }),
    );
    expect(byAuthor.content.map((d) => d.id)).toEqual([b.id]);

    const future = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, { query: tag, createdAtFrom: '2999-01-01' }),
    );
    expect(future.content).toEqual([]);
    const paged = ok<DashboardPage>(
      await api.get('/api/dashboard', cast.tokens.viewer, { query: tag, size: '2', page: '1', sort: 'id,desc' }),
    );
    expect(paged.content.map((d) => d.id)).toEqual([a.id]);

    const outsider = ok<DashboardPage>(await api.get('/api/dashboard', cast.tokens.plain, { query: tag }));
    expect(outsider.content).toEqual([]);
  });

  it('answers 422 for an unknown sort field', async () => {
    const bad = await api.get('/api/dashboard', cast.tokens.viewer, { sort: 'type,asc' });
    expect(bad.status).toBe(422);
    expect(Object.keys(failure(bad).errors ?? {})).toEqual(['sort']);
  });
});
