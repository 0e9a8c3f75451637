import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import {
  createGroup,
  createSharedWorkspace,
  createSysadmin,
  createUser,
  login,
  uniq,
  type TestUser,
} from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import type { z } from 'zod';
import type {
  listMembersOutput,
  listWorkspacesOutput,
  workspaceDetails,
  workspaceView,
} from '../../../routers/workspaces/schemas';

type WorkspacePage = z.output<typeof listWorkspacesOutput>;
type WorkspaceView = z.output<typeof workspaceView>;
type WorkspaceDetails = z.output<typeof workspaceDetails>;
type MemberPage = z.output<typeof listMembersOutput>;

const { t, api } = useTestApp();
let manager: TestUser;
let managerToken: string;
let adminToken: string;

beforeAll(async () => {
  manager = await createUser(t.deps, { groupIds: [t.deps.systemGroups.workspaceManagers] });
  managerToken = await login(api, manager.username, manager.password);
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
});

describe('POST /api/workspaces', () => {
  it('creates a shared workspace whose creator is its Администратор', async () => {
    const name = uniq('Продажи');
    const res = await api.post('/api/workspaces', { name, description: 'Команда продаж' }, managerToken);
    expect(res.status).toBe(200);
    expect(ok<WorkspaceView>(res)).toMatchObject({
      name,
      description: 'Команда продаж',
      type: 'shared',
      type_label: 'Общее',
      role: 'Администратор',
      created_by: manager.id,
      owner_user_id: null,
    });
    const members = await api.get(`/api/workspaces/${ok<WorkspaceView>(res).id}/members`, managerToken);
    expect(ok<MemberPage>(members).content).toEqual([
      expect.objectContaining({
        user_id: manager.id,
        group_id: null,
        subject_type: 'user',
        name: manager.username,
        role: 'Администратор',
      }),
    ]);
  });

  it('answers a blank name with 422 and refuses everyone outside «Менеджеры рабочих пространств» with 403', async () => {
    const blank = await api.post('/api/workspaces', { name: ' ' }, managerToken);
    expect(blank.status).toBe(422);
    expect(failure(blank).errors).toEqual({ name: 'must not be blank' });
    const plain = await createUser(t.deps);
    const res = await api.post(
      '/api/workspaces',
      { name: uniq('ws') },
      await login(api, plain.username, plain.password),
    );
    expect(res.status).toBe(403);
    expect(failure(res).message).toBe('Доступ запрещён');
  });
});

describe('GET /api/workspaces', () => {
  it('lists the workspaces of the caller with their role, personal first; filters by type and name', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    const tag = uniq('team');
    const a = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Редактор' }], { name: `${tag} b` });
    const g = await createGroup(t.deps);
    const b = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Наблюдатель' }], { name: `${tag} a` });
    await createSharedWorkspace(t.deps, [{ groupId: g.id, role: 'Администратор' }], { name: `${tag} hidden` });
    const res = await api.get('/api/workspaces', token);
    expect(res.status).toBe(200);
    expect(ok<WorkspacePage>(res).content.map((w) => [w.id, w.role])).toEqual([
      [u.personalWorkspaceId, 'Администратор'],
      [b, 'Наблюдатель'],
      [a, 'Редактор'],
    ]);
    expect(ok<WorkspacePage>(res).page.total_elements).toBe(3);
    const shared = await api.get('/api/workspaces', token, { type: 'shared', sort: 'name,desc' });
    expect(ok<WorkspacePage>(shared).content.map((w) => w.id)).toEqual([a, b]);
    const search = await api.get('/api/workspaces', token, { query: `${tag} b` });
    expect(ok<WorkspacePage>(search).content.map((w) => w.id)).toEqual([a]);
    expect((await api.get('/api/workspaces', token, { type: 'team' })).status).toBe(422);
    expect((await api.get('/api/workspaces', token, { sort: 'owner,asc' })).status).toBe(422);
  });

  it('shows a system administrator every workspace (role null where not a member) unless memberOnly', async () => {
    const u = await createUser(t.deps);
    const ws = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Администратор' }]);
    const all = await api.get('/api/workspaces', adminToken, { type: 'shared', size: '1000' });
    expect(ok<WorkspacePage>(all).content.find((w) => w.id === ws)).toMatchObject({ role: null });
    const own = await api.get('/api/workspaces', adminToken, { memberOnly: 'true', size: '1000' });
    expect(ok<WorkspacePage>(own).content.find((w) => w.id === ws)).toBeUndefined();
  });
});

describe('GET /api/workspaces/{id}', () => {
  it('gives members the details and answers everyone else 404', async () => {
    const [member, stranger] = [await createUser(t.deps), await createUser(t.deps)];
    const ws = await createSharedWorkspace(t.deps, [{ userId: member.id, role: 'Наблюдатель' }]);
    const res = await api.get(`/api/workspaces/${ws}`, await login(api, member.username, member.password));
    expect(res.status).toBe(200);
    expect(ok<WorkspaceDetails>(res)).toMatchObject({
      id: ws,
      type: 'shared',
      role: 'Наблюдатель',
      member_count: 1,
      pipeline_stage: null,
    });
    const strangerToken = await login(api, stranger.username, stranger.password);
    const hidden = await api.get(`/api/workspaces/${ws}`, strangerToken);
    expect(hidden.status).toBe(404);
    expect(failure(hidden).message).toBe(`Рабочее пространство не найдено (id ${ws})`);
    expect((await api.get(`/api/workspaces/${member.personalWorkspaceId}`, strangerToken)).status).toBe(404);
    expect((await api.get('/api/workspaces/987654', strangerToken)).status).toBe(404);
    expect((await api.get(`/api/workspaces/${ws}/members`, strangerToken)).status).toBe(404);
  });
});

describe('PUT /api/workspaces/{id}', () => {
  it('lets the Администратор rename and describe; a personal workspace too', async () => {
    const ws = ok<WorkspaceView>(await api.post('/api/workspaces', { name: uniq('old') }, managerToken)).id;
    const res = await api.put(`/api/workspaces/${ws}`, { name: 'Новое имя', description: 'Описание' }, managerToken);
    expect(res.status).toBe(200);
    expect(ok<WorkspaceView>(res)).toMatchObject({ name: 'Новое имя', description: 'Описание', role: 'Администратор' });
    const personal = await api.put(`/api/workspaces/${manager.personalWorkspaceId}`, { name: 'Моё' }, managerToken);
    expect(personal.status).toBe(200);
    expect((await api.put(`/api/workspaces/${ws}`, { name: '' }, managerToken)).status).toBe(422);
    expect((await api.put('/api/workspaces/987654', { name: 'x' }, managerToken)).status).toBe(404);
  });
});

describe('DELETE /api/workspaces/{id}', () => {
  it('deletes a shared workspace with its memberships', async () => {
    const ws = ok<WorkspaceView>(await api.post('/api/workspaces', { name: uniq('gone') }, managerToken)).id;
    const res = await api.delete(`/api/workspaces/${ws}`, managerToken);
    expect(res.status).toBe(200);
    expect(ok<Deleted>(res)).toEqual({ id: ws, deleted: true });
    expect((await api.get(`/api/workspaces/${ws}`, managerToken)).status).toBe(404);
    expect((await api.delete(`/api/workspaces/${ws}`, managerToken)).status).toBe(404);
  });

  it('refuses to delete a personal workspace (400)', async () => {
    const res = await api.delete(`/api/workspaces/${manager.personalWorkspaceId}`, managerToken);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Личное пространство нельзя удалить');
  });
});
