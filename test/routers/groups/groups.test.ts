import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createGroup, createSysadmin, createUser, login, uniq } from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import type { z } from 'zod';
import type {
  addMembersOutput,
  groupView,
  listGroupsOutput,
  listMembersOutput,
  removeMemberOutput,
} from '../../../routers/groups/schemas';
import type { listUserGroupsOutput } from '../../../routers/users/schemas';

type GroupPage = z.output<typeof listGroupsOutput>;
type GroupMemberPage = z.output<typeof listMembersOutput>;
type GroupView = z.output<typeof groupView>;
type AddedMembers = z.output<typeof addMembersOutput>;
type RemovedMember = z.output<typeof removeMemberOutput>;
type UserGroupPage = z.output<typeof listUserGroupsOutput>;

const { t, api } = useTestApp();
let adminToken: string;
let userToken: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
  const plain = await createUser(t.deps);
  userToken = await login(api, plain.username, plain.password);
});

describe('groups', () => {
  it('creates, reads, renames and deletes a group', async () => {
    const name = uniq('Аналитики');
    const created = await api.post('/api/groups', { name, description: 'Отдел аналитики' }, adminToken);
    expect(created.status).toBe(200);
    const g = ok<GroupView>(created);
    expect(g).toMatchObject({ name, description: 'Отдел аналитики', system: false, system_key: null, member_count: 0 });

    expect(ok<GroupView>(await api.get(`/api/groups/${g.id}`, userToken))).toMatchObject({ id: g.id, name });
    const renamed = await api.put(`/api/groups/${g.id}`, { name: `${name}-2` }, adminToken);
    expect(renamed.status).toBe(200);
    expect(ok<GroupView>(renamed)).toMatchObject({ name: `${name}-2`, description: 'Отдел аналитики' });

    const deleted = await api.delete(`/api/groups/${g.id}`, adminToken);
    expect(deleted.status).toBe(200);
    expect(ok<Deleted>(deleted)).toEqual({ id: g.id, deleted: true });
    expect((await api.get(`/api/groups/${g.id}`, adminToken)).status).toBe(404);
  });

  it('lists groups paged with system groups flagged and first', async () => {
    const res = await api.get('/api/groups', userToken, { size: '2' });
    expect(res.status).toBe(200);
    expect(ok<GroupPage>(res).content.map((g) => g.system)).toEqual([true, true]);
    expect(ok<GroupPage>(res).content.map((g) => g.name)).toContain('Менеджеры рабочих пространств');
    const tag = uniq('list');
    for (const n of ['b', 'a']) await createGroup(t.deps, { name: `${tag}_${n}` });
    const search = await api.get('/api/groups', userToken, { query: tag, sort: 'name,asc' });
    expect(ok<GroupPage>(search).content.map((g) => g.name)).toEqual([`${tag}_a`, `${tag}_b`]);
    expect(ok<GroupPage>(search).page).toEqual({ size: 20, number: 0, total_elements: 2, total_pages: 1 });
    expect((await api.get('/api/groups', userToken, { sort: 'secret,asc' })).status).toBe(422);
  });

  it('refuses duplicate names regardless of case (400), also on rename and under concurrency', async () => {
    const name = uniq('Dup');
    expect((await api.post('/api/groups', { name }, adminToken)).status).toBe(200);
    const again = await api.post('/api/groups', { name: name.toLowerCase() }, adminToken);
    expect(again.status).toBe(400);
    expect(failure(again).message).toBe(`Группа с именем «${name.toLowerCase()}» уже существует`);
    const other = await createGroup(t.deps);
    expect((await api.put(`/api/groups/${other.id}`, { name: name.toUpperCase() }, adminToken)).status).toBe(400);
    const raced = uniq('race');
    const results = await Promise.all([1, 2, 3].map(() => api.post('/api/groups', { name: raced }, adminToken)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it('answers blank names with 422 and unknown ids with 404', async () => {
    const blank = await api.post('/api/groups', { name: '   ' }, adminToken);
    expect(blank.status).toBe(422);
    expect(failure(blank).errors).toEqual({ name: 'must not be blank' });
    expect((await api.get('/api/groups/987654', adminToken)).status).toBe(404);
    expect((await api.put('/api/groups/987654', { name: 'x' }, adminToken)).status).toBe(404);
    expect((await api.delete('/api/groups/987654', adminToken)).status).toBe(404);
  });

  it('refuses to delete or rename a system group (400) but lets its description change', async () => {
    const id = t.deps.systemGroups.workspaceManagers;
    const del = await api.delete(`/api/groups/${id}`, adminToken);
    expect(del.status).toBe(400);
    expect(failure(del).message).toBe('Системную группу нельзя удалить');
    expect((await api.delete(`/api/groups/${t.deps.systemGroups.platformAdmins}`, adminToken)).status).toBe(400);
    const rename = await api.put(`/api/groups/${id}`, { name: 'Другое имя' }, adminToken);
    expect(rename.status).toBe(400);
    expect(failure(rename).message).toBe('Системную группу нельзя переименовать');
    const describe = await api.put(
      `/api/groups/${id}`,
      { name: 'Менеджеры рабочих пространств', description: 'Создают командные пространства' },
      adminToken,
    );
    expect(describe.status).toBe(200);
    expect(ok<GroupView>(describe)).toMatchObject({
      system: true,
      system_key: 'workspace_managers',
      description: 'Создают командные пространства',
    });
  });

  it('refuses to delete the access group of API tokens (400)', async () => {
    const g = await createGroup(t.deps);
    const settings = { enabled: true, allowed_account_types: ['local'], access_group_id: g.id };
    expect((await api.put('/api/mcp-tokens/settings', settings, adminToken)).status).toBe(200);
    const res = await api.delete(`/api/groups/${g.id}`, adminToken);
    expect(res.status).toBe(400);
    expect(failure(res).message).toContain('MCP-токенам');
    await api.put('/api/mcp-tokens/settings', { ...settings, enabled: false, access_group_id: null }, adminToken);
    expect((await api.delete(`/api/groups/${g.id}`, adminToken)).status).toBe(200);
  });
});

describe('group members', () => {
  it('adds users (idempotently), lists them paged and removes one', async () => {
    const g = await createGroup(t.deps);
    const [a, b] = [await createUser(t.deps), await createUser(t.deps)];
    const add = await api.post(`/api/groups/${g.id}/members`, { user_ids: [a.id, b.id, a.id] }, adminToken);
    expect(add.status).toBe(200);
    expect(ok<AddedMembers>(add)).toEqual({
      group_id: g.id,
      added_user_ids: [a.id, b.id],
      already_member_user_ids: [],
    });
    const again = await api.post(`/api/groups/${g.id}/members`, { user_ids: [b.id] }, adminToken);
    expect(ok<AddedMembers>(again)).toEqual({ group_id: g.id, added_user_ids: [], already_member_user_ids: [b.id] });

    const list = await api.get(`/api/groups/${g.id}/members`, userToken, { sort: 'id,desc', size: '1' });
    expect(list.status).toBe(200);
    expect(ok<GroupMemberPage>(list).content).toEqual([
      { id: b.id, username: b.username, full_name: '', active: true, added_at: expect.any(String) },
    ]);
    expect(ok<GroupMemberPage>(list).page).toEqual({ size: 1, number: 0, total_elements: 2, total_pages: 2 });
    expect(ok<GroupView>(await api.get(`/api/groups/${g.id}`, userToken)).member_count).toBe(2);

    const removed = await api.delete(`/api/groups/${g.id}/members/${a.id}`, adminToken);
    expect(removed.status).toBe(200);
    expect(ok<RemovedMember>(removed)).toEqual({ group_id: g.id, user_id: a.id, removed: true });
    expect(
      ok<GroupMemberPage>(await api.get(`/api/groups/${g.id}/members`, userToken)).content.map((m) => m.id),
    ).toEqual([b.id]);
  });

  it('answers unknown user ids in the body with 422 at their position, and writes nothing', async () => {
    const g = await createGroup(t.deps);
    const a = await createUser(t.deps);
    const res = await api.post(`/api/groups/${g.id}/members`, { user_ids: [a.id, 987654] }, adminToken);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'userIds[1]': 'Пользователь не найден (id 987654)' });
    expect(ok<GroupView>(await api.get(`/api/groups/${g.id}`, adminToken)).member_count).toBe(0);
    const empty = await api.post(`/api/groups/${g.id}/members`, { user_ids: [] }, adminToken);
    expect(empty.status).toBe(422);
    expect(failure(empty).errors).toEqual({ userIds: 'size must be at least 1' });
  });

  it('answers unknown groups and non-members with 404', async () => {
    const g = await createGroup(t.deps);
    const a = await createUser(t.deps);
    expect((await api.post('/api/groups/987654/members', { user_ids: [a.id] }, adminToken)).status).toBe(404);
    expect((await api.get('/api/groups/987654/members', adminToken)).status).toBe(404);
    const notMember = await api.delete(`/api/groups/${g.id}/members/${a.id}`, adminToken);
    expect(notMember.status).toBe(404);
    expect(failure(notMember).message).toBe(`Пользователь не состоит в группе (id ${a.id})`);
  });

  it('deleting a group removes its memberships but not the users', async () => {
    const g = await createGroup(t.deps);
    const a = await createUser(t.deps);
    await api.post(`/api/groups/${g.id}/members`, { user_ids: [a.id] }, adminToken);
    expect((await api.delete(`/api/groups/${g.id}`, adminToken)).status).toBe(200);
    expect(ok<UserGroupPage>(await api.get(`/api/users/${a.id}/groups`, adminToken)).content).toEqual([]);
  });
});
