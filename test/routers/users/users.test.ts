import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createGroup, createSysadmin, createUser, login, uniq } from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import type { z } from 'zod';
import type { loginOutput } from '../../../routers/auth/schemas';
import type {
  listUserGroupsOutput,
  listUsersOutput,
  meOutput,
  userOutput,
  userRecord,
} from '../../../routers/users/schemas';

type UserPage = z.output<typeof listUsersOutput>;
type Me = z.output<typeof meOutput>;
type UserRecord = z.output<typeof userRecord>;
type UserOutput = z.output<typeof userOutput>;
type Login = z.output<typeof loginOutput>;
type UserGroupPage = z.output<typeof listUserGroupsOutput>;

const { t, api } = useTestApp();
let adminToken: string;
let adminId: number;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminId = admin.id;
  adminToken = await login(api, admin.username, admin.password);
});

const strongPassword = () => `Pw-${uniq('x')}-9`;

describe('POST /api/users', () => {
  it('creates a local account with groups and a personal workspace; the account can log in', async () => {
    const group = await createGroup(t.deps);
    const username = uniq('new');
    const password = strongPassword();
    const res = await api.post(
      '/api/users',
      { username, password, full_name: 'Иван Петров', email: 'ivan@example.org', group_ids: [group.id] },
      adminToken,
    );
    expect(res.status).toBe(200);
    const u = ok<UserRecord>(res);
    expect(u).toMatchObject({
      username,
      full_name: 'Иван Петров',
      email: 'ivan@example.org',
      account_type: 'local',
      active: true,
    });
    expect(u.groups).toEqual([{ id: group.id, name: group.name, system: false }]);
    expect(u.personal_workspace_id).toEqual(expect.any(Number));
    expect(u).not.toHaveProperty('password');
    expect(u).not.toHaveProperty('password_hash');
    await expect(login(api, username, password)).resolves.toEqual(expect.any(String));
  });

  it('refuses a duplicate username regardless of case (400)', async () => {
    const username = uniq('dup');
    expect((await api.post('/api/users', { username, password: strongPassword() }, adminToken)).status).toBe(200);
    const res = await api.post(
      '/api/users',
      { username: username.toUpperCase(), password: strongPassword() },
      adminToken,
    );
    expect(res.status).toBe(400);
    expect(failure(res).message).toContain('уже существует');
  });

  it('answers two concurrent creates of one name with one success and one 400, never a 500', async () => {
    const username = uniq('race');
    const results = await Promise.all(
      [1, 2, 3].map(() => api.post('/api/users', { username, password: strongPassword() }, adminToken)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it('answers weak, blank and missing passwords with 422 on password', async () => {
    for (const [password, message] of [
      ['short1', 'Пароль должен содержать не менее 8 символов'],
      ['onlyletters', 'Пароль должен содержать буквы и цифры'],
      ['        ', 'must not be blank'],
    ]) {
      const res = await api.post('/api/users', { username: uniq('weak'), password }, adminToken);
      expect(res.status).toBe(422);
      expect(failure(res).errors).toEqual({ password: message });
    }
    const missing = await api.post('/api/users', { username: uniq('nopw') }, adminToken);
    expect(missing.status).toBe(422);
    expect(failure(missing).errors).toEqual({ password: 'must not be blank' });
  });

  it('lets a service account exist without a password', async () => {
    const res = await api.post('/api/users', { username: uniq('svc'), account_type: 'service' }, adminToken);
    expect(res.status).toBe(200);
    expect(ok<UserRecord>(res).account_type).toBe('service');
  });

  it('answers bad fields with 422 and field paths, and unknown group ids with 422 at their position', async () => {
    const res = await api.post(
      '/api/users',
      { username: 'has space', password: strongPassword(), email: 'nope', account_type: 'robot', extra: 1 },
      adminToken,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      username: 'may contain only letters, digits and . _ @ -',
      email: 'must be a well-formed email address',
      accountType: 'must be one of: local, sso, service',
      extra: 'unknown field',
    });
    const group = await createGroup(t.deps);
    const unknown = await api.post(
      '/api/users',
      { username: uniq('g'), password: strongPassword(), group_ids: [group.id, 999_999] },
      adminToken,
    );
    expect(unknown.status).toBe(422);
    expect(failure(unknown).errors).toEqual({ 'groupIds[1]': 'Группа не найдена (id 999999)' });
    const blank = await api.post('/api/users', { username: '  ', password: strongPassword() }, adminToken);
    expect(failure(blank).errors).toEqual({ username: 'must not be blank' });
  });
});

describe('GET /api/users and /api/users/{id}', () => {
  it('pages with sort and filters; system administrators get whole records', async () => {
    const group = await createGroup(t.deps);
    const tag = uniq('list');
    for (const n of ['c', 'a', 'b']) {
      const r = await api.post(
        '/api/users',
        { username: `${tag}_${n}`, password: strongPassword(), full_name: `Name ${n}`, group_ids: [group.id] },
        adminToken,
      );
      expect(r.status).toBe(200);
    }
    const res = await api.get('/api/users', adminToken, { query: tag, sort: 'username,desc', size: '2', page: '0' });
    expect(res.status).toBe(200);
    expect(ok<UserPage>(res).content.map((u) => u.username)).toEqual([`${tag}_c`, `${tag}_b`]);
    expect(ok<UserPage>(res).page).toEqual({ size: 2, number: 0, total_elements: 3, total_pages: 2 });
    expect(ok<UserPage>(res).content[0]).toHaveProperty('email');
    const second = await api.get('/api/users', adminToken, { query: tag, sort: 'username,desc', size: '2', page: '1' });
    expect(ok<UserPage>(second).content.map((u) => u.username)).toEqual([`${tag}_a`]);
    const byGroup = await api.get('/api/users', adminToken, { groupId: String(group.id) });
    expect(ok<UserPage>(byGroup).page.total_elements).toBe(3);
  });

  it('gives other users only id, username and full_name, and does not search e-mails for them', async () => {
    const plain = await createUser(t.deps);
    const token = await login(api, plain.username, plain.password);
    const marker = uniq('mail');
    const target = await api.post(
      '/api/users',
      { username: uniq('target'), password: strongPassword(), email: `${marker}@example.org` },
      adminToken,
    );
    const list = await api.get('/api/users', token, { query: ok<UserRecord>(target).username });
    expect(list.status).toBe(200);
    expect(ok<UserPage>(list).content).toEqual([
      { id: ok<UserRecord>(target).id, username: ok<UserRecord>(target).username, full_name: '' },
    ]);
    expect(ok<UserPage>(await api.get('/api/users', token, { query: marker })).content).toEqual([]);
    expect(ok<UserPage>(await api.get('/api/users', adminToken, { query: marker })).content).toHaveLength(1);
    const one = await api.get(`/api/users/${ok<UserRecord>(target).id}`, token);
    expect(ok<UserOutput>(one)).toEqual({
      id: ok<UserRecord>(target).id,
      username: ok<UserRecord>(target).username,
      full_name: '',
    });
    const own = await api.get(`/api/users/${plain.id}`, token);
    expect(ok<UserOutput>(own)).toHaveProperty('personal_workspace_id', plain.personalWorkspaceId);
  });

  it('filters by active, treats % and _ literally, and refuses an unknown sort field with 422', async () => {
    const res = await api.get('/api/users', adminToken, { active: 'false', query: '%' });
    expect(res.status).toBe(200);
    expect(ok<UserPage>(res).content).toEqual([]);
    const bad = await api.get('/api/users', adminToken, { sort: 'password_hash,asc' });
    expect(bad.status).toBe(422);
    expect(failure(bad).errors!.sort).toContain('must name one of the fields');
  });

  it('answers an unknown id with 404, and an id beyond the id range with 422 (not a database error)', async () => {
    const res = await api.get('/api/users/987654', adminToken);
    expect(res.status).toBe(404);
    expect(failure(res).message).toBe('Пользователь не найден (id 987654)');
    const huge = await api.get('/api/users/99999999999', adminToken);
    expect(huge.status).toBe(422);
    expect(failure(huge).errors).toEqual({ id: 'must be less than or equal to 2147483647' });
    expect((await api.get('/api/workspaces/99999999999', adminToken)).status).toBe(422);
    expect((await api.post('/api/groups/1/members', { user_ids: [99999999999] }, adminToken)).status).toBe(422);
  });
});

describe('GET /api/users/me and /api/users/{id}/groups', () => {
  it('returns the profile with groups, personal workspace and the rights of the token', async () => {
    const group = await createGroup(t.deps);
    const u = await createUser(t.deps, { groupIds: [group.id, t.deps.systemGroups.workspaceManagers] });
    const token = await login(api, u.username, u.password);
    const res = await api.get('/api/users/me', token);
    expect(res.status).toBe(200);
    expect(ok<Me>(res)).toMatchObject({
      id: u.id,
      username: u.username,
      account_type: 'local',
      personal_workspace_id: u.personalWorkspaceId,
      is_system_administrator: false,
      is_workspace_manager: true,
      token_kind: 'session',
    });
    expect(
      ok<Me>(res)
        .groups.map((g) => g.id)
        .sort(),
    ).toEqual([group.id, t.deps.systemGroups.workspaceManagers].sort());
    const groups = await api.get(`/api/users/${u.id}/groups`, token, { sort: 'name,asc' });
    expect(groups.status).toBe(200);
    expect(ok<UserGroupPage>(groups).page.total_elements).toBe(2);
    expect(ok<UserGroupPage>(groups).content.find((g) => g.id === t.deps.systemGroups.workspaceManagers)).toMatchObject(
      {
        name: 'Менеджеры рабочих пространств',
        system: true,
      },
    );
    expect((await api.get('/api/users/987654/groups', token)).status).toBe(404);
  });
});

describe('PUT /api/users/{id}', () => {
  it('changes profile fields and account type', async () => {
    const u = await createUser(t.deps);
    const res = await api.put(
      `/api/users/${u.id}`,
      { full_name: 'Новое Имя', email: null, account_type: 'service' },
      adminToken,
    );
    expect(res.status).toBe(200);
    expect(ok<UserRecord>(res)).toMatchObject({
      full_name: 'Новое Имя',
      email: null,
      account_type: 'service',
      active: true,
    });
  });

  it('deactivation stops the session token at once and revokes refresh and API tokens; reactivation allows login', async () => {
    const u = await createUser(t.deps);
    const loginRes = await api.post('/api/auth/login', { username: u.username, password: u.password });
    const { token, refresh_token } = ok<Login>(loginRes);
    expect((await api.get('/api/users/me', token)).status).toBe(200); // the status is now cached
    const off = await api.put(`/api/users/${u.id}`, { active: false }, adminToken);
    expect(off.status).toBe(200);
    expect(ok<UserRecord>(off).active).toBe(false);
    expect((await api.get('/api/users/me', token)).status).toBe(401);
    expect((await api.post('/api/auth/refresh', { refresh_token })).status).toBe(401);
    expect((await api.post('/api/auth/login', { username: u.username, password: u.password })).status).toBe(401);
    expect((await api.put(`/api/users/${u.id}`, { active: true }, adminToken)).status).toBe(200);
    expect((await api.post('/api/auth/login', { username: u.username, password: u.password })).status).toBe(200);
  });

  it('refuses to deactivate oneself (400) and answers unknown ids with 404', async () => {
    const self = await api.put(`/api/users/${adminId}`, { active: false }, adminToken);
    expect(self.status).toBe(400);
    expect(failure(self).message).toBe('Нельзя отключить собственную учётную запись');
    expect((await api.put('/api/users/987654', { full_name: 'x' }, adminToken)).status).toBe(404);
  });
});

describe('DELETE /api/users/{id}', () => {
  it('deletes the account with its personal workspace; its session token stops working at once', async () => {
    const u = await createUser(t.deps);
    const token = await login(api, u.username, u.password);
    expect((await api.get('/api/users/me', token)).status).toBe(200);
    const res = await api.delete(`/api/users/${u.id}`, adminToken);
    expect(res.status).toBe(200);
    expect(ok<Deleted>(res)).toEqual({ id: u.id, deleted: true });
    expect((await api.get('/api/users/me', token)).status).toBe(401);
    expect((await api.get(`/api/users/${u.id}`, adminToken)).status).toBe(404);
    expect((await api.get(`/api/workspaces/${u.personalWorkspaceId}`, adminToken)).status).toBe(404);
    expect((await api.delete(`/api/users/${u.id}`, adminToken)).status).toBe(404);
  });

  it('refuses to delete oneself (400)', async () => {
    const res = await api.delete(`/api/users/${adminId}`, adminToken);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Нельзя удалить собственную учётную запись');
  });
});

describe('GET /api/v3/api-docs', () => {
  it('documents the users, groups and workspaces operations', async () => {
    const res = await api.get('/api/v3/api-docs');
    expect(res.status).toBe(200);
    const paths = res.body.paths;
    expect(Object.keys(paths['/api/users'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(paths['/api/users/{id}'])).toEqual(expect.arrayContaining(['get', 'put', 'delete']));
    expect(paths['/api/users/me/password'].put).toBeDefined();
    expect(paths['/api/user-attributes'].get).toBeDefined();
    expect(paths['/api/groups/{id}/members/{userId}'].delete).toBeDefined();
    expect(Object.keys(paths['/api/workspaces/{id}/members/{memberId}'])).toEqual(
      expect.arrayContaining(['put', 'delete']),
    );
  });
});
