import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import {
  addWorkspaceMember,
  createGroup,
  createSharedWorkspace,
  createSysadmin,
  createUser,
  login,
  type TestUser,
} from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type {
  listMembersOutput,
  memberView,
  removeMemberOutput,
  workspaceDetails,
} from '../../../routers/workspaces/schemas';

type MemberPage = z.output<typeof listMembersOutput>;
type MemberView = z.output<typeof memberView>;
type RemovedMember = z.output<typeof removeMemberOutput>;
type WorkspaceDetails = z.output<typeof workspaceDetails>;

const { t, api } = useTestApp();
let admin: TestUser;
let adminToken: string;

beforeAll(async () => {
  admin = await createUser(t.deps);
  adminToken = await login(api, admin.username, admin.password);
});

const newWorkspace = () => createSharedWorkspace(t.deps, [{ userId: admin.id, role: 'Администратор' }]);

describe('workspace members', () => {
  it('adds a user and a group, lists them sorted by role, changes a role and removes a member', async () => {
    const ws = await newWorkspace();
    const [u, g] = [await createUser(t.deps), await createGroup(t.deps)];
    const addUser = await api.post(`/api/workspaces/${ws}/members`, { user_id: u.id, role: 'Наблюдатель' }, adminToken);
    expect(addUser.status).toBe(200);
    expect(ok<MemberView>(addUser)).toMatchObject({
      user_id: u.id,
      group_id: null,
      subject_type: 'user',
      name: u.username,
      role: 'Наблюдатель',
    });
    const addGroup = await api.post(`/api/workspaces/${ws}/members`, { group_id: g.id, role: 'Редактор' }, adminToken);
    expect(addGroup.status).toBe(200);
    expect(ok<MemberView>(addGroup)).toMatchObject({
      user_id: null,
      group_id: g.id,
      subject_type: 'group',
      name: g.name,
      full_name: null,
      role: 'Редактор',
    });

    const list = await api.get(`/api/workspaces/${ws}/members`, adminToken);
    expect(ok<MemberPage>(list).content.map((m) => m.role)).toEqual(['Администратор', 'Редактор', 'Наблюдатель']);
    expect(ok<MemberPage>(list).page.total_elements).toBe(3);
    const byRole = await api.get(`/api/workspaces/${ws}/members`, adminToken, { sort: 'role,asc', size: '1' });
    expect(ok<MemberPage>(byRole).content.map((m) => m.role)).toEqual(['Наблюдатель']);

    const memberId = ok<MemberView>(addUser).member_id;
    const promoted = await api.put(`/api/workspaces/${ws}/members/${memberId}`, { role: 'Администратор' }, adminToken);
    expect(promoted.status).toBe(200);
    expect(ok<MemberView>(promoted).role).toBe('Администратор');
    const removed = await api.delete(`/api/workspaces/${ws}/members/${ok<MemberView>(addGroup).member_id}`, adminToken);
    expect(removed.status).toBe(200);
    expect(ok<RemovedMember>(removed)).toEqual({ member_id: ok<MemberView>(addGroup).member_id, removed: true });
    expect(ok<WorkspaceDetails>(await api.get(`/api/workspaces/${ws}`, adminToken)).member_count).toBe(2);
  });

  it('refuses adding the same user or group twice (400)', async () => {
    const ws = await newWorkspace();
    const [u, g] = [await createUser(t.deps), await createGroup(t.deps)];
    expect(
      (await api.post(`/api/workspaces/${ws}/members`, { user_id: u.id, role: 'Редактор' }, adminToken)).status,
    ).toBe(200);
    const again = await api.post(`/api/workspaces/${ws}/members`, { user_id: u.id, role: 'Наблюдатель' }, adminToken);
    expect(again.status).toBe(400);
    expect(failure(again).message).toBe('Пользователь уже является участником пространства');
    expect(
      (await api.post(`/api/workspaces/${ws}/members`, { group_id: g.id, role: 'Редактор' }, adminToken)).status,
    ).toBe(200);
    const groupAgain = await api.post(
      `/api/workspaces/${ws}/members`,
      { group_id: g.id, role: 'Редактор' },
      adminToken,
    );
    expect(groupAgain.status).toBe(400);
    expect(failure(groupAgain).message).toBe('Группа уже является участником пространства');
    const self = await api.post(`/api/workspaces/${ws}/members`, { user_id: admin.id, role: 'Редактор' }, adminToken);
    expect(self.status).toBe(400);
  });

  it('answers bad bodies with 422: neither or both subjects, unknown role, unknown user or group id', async () => {
    const ws = await newWorkspace();
    const u = await createUser(t.deps);
    const cases: [unknown, Record<string, string>][] = [
      [{ role: 'Редактор' }, { userId: 'one of user_id or group_id is required' }],
      [{ user_id: u.id, group_id: 1, role: 'Редактор' }, { groupId: 'give either user_id or group_id, not both' }],
      [{ user_id: u.id, role: 'Владелец' }, { role: 'must be one of: Администратор, Редактор, Наблюдатель' }],
      [{ user_id: u.id }, { role: 'must be one of: Администратор, Редактор, Наблюдатель' }],
      [{ user_id: 987654, role: 'Редактор' }, { userId: 'Пользователь не найден (id 987654)' }],
      [{ group_id: 987654, role: 'Редактор' }, { groupId: 'Группа не найдена (id 987654)' }],
    ];
    for (const [body, errors] of cases) {
      const res = await api.post(`/api/workspaces/${ws}/members`, body, adminToken);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failure(res).errors).toEqual(errors);
    }
  });

  it('never leaves a workspace without an Администратор: no demotion or removal of the last one (400)', async () => {
    const ws = await newWorkspace();
    const list = await api.get(`/api/workspaces/${ws}/members`, adminToken);
    const own = ok<MemberPage>(list).content[0].member_id;
    const demote = await api.put(`/api/workspaces/${ws}/members/${own}`, { role: 'Редактор' }, adminToken);
    expect(demote.status).toBe(400);
    expect(failure(demote).message).toContain('последнего администратора');
    const leave = await api.delete(`/api/workspaces/${ws}/members/${own}`, adminToken);
    expect(leave.status).toBe(400);
    expect(failure(leave).message).toContain('последнего администратора');
    // With a second Администратор the first may step down.
    const other = await createUser(t.deps);
    await addWorkspaceMember(t.deps, ws, { userId: other.id, role: 'Администратор' });
    expect((await api.put(`/api/workspaces/${ws}/members/${own}`, { role: 'Администратор' }, adminToken)).status).toBe(
      200,
    );
    expect((await api.delete(`/api/workspaces/${ws}/members/${own}`, adminToken)).status).toBe(200);
    expect((await api.get(`/api/workspaces/${ws}`, adminToken)).status).toBe(404);
  });

  it('lets only one of two concurrent demotions of the last two administrators through', async () => {
    const ws = await newWorkspace();
    const other = await createUser(t.deps);
    const otherMember = await addWorkspaceMember(t.deps, ws, { userId: other.id, role: 'Администратор' });
    const otherToken = await login(api, other.username, other.password);
    const own = ok<MemberPage>(await api.get(`/api/workspaces/${ws}/members`, adminToken)).content.find(
      (m) => m.user_id === admin.id,
    )!.member_id;
    const results = await Promise.all([
      api.put(`/api/workspaces/${ws}/members/${own}`, { role: 'Редактор' }, adminToken),
      api.put(`/api/workspaces/${ws}/members/${otherMember}`, { role: 'Редактор' }, otherToken),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it('refuses members in a personal workspace (400) and answers unknown member ids with 404', async () => {
    const u = await createUser(t.deps);
    const personal = await api.post(
      `/api/workspaces/${admin.personalWorkspaceId}/members`,
      { user_id: u.id, role: 'Редактор' },
      adminToken,
    );
    expect(personal.status).toBe(400);
    expect(failure(personal).message).toBe('В личное пространство нельзя добавлять участников');
    const ws = await newWorkspace();
    const elsewhere = await createSharedWorkspace(t.deps, [{ userId: u.id, role: 'Администратор' }]);
    const foreignMember = ok<MemberPage>(
      await api.get(`/api/workspaces/${elsewhere}/members`, await login(api, u.username, u.password)),
    ).content[0].member_id;
    const wrongWorkspace = await api.put(
      `/api/workspaces/${ws}/members/${foreignMember}`,
      { role: 'Редактор' },
      adminToken,
    );
    expect(wrongWorkspace.status).toBe(404);
    expect(failure(wrongWorkspace).message).toBe(`Участник пространства не найден (id ${foreignMember})`);
    expect((await api.delete(`/api/workspaces/${ws}/members/987654`, adminToken)).status).toBe(404);
    expect(
      (await api.post('/api/workspaces/987654/members', { user_id: u.id, role: 'Редактор' }, adminToken)).status,
    ).toBe(404);
  });

  it('lets a system administrator who is not a member restore an Администратор of an orphaned workspace', async () => {
    const gone = await createUser(t.deps);
    const ws = await createSharedWorkspace(t.deps, [{ userId: gone.id, role: 'Администратор' }]);
    const sysadmin = await createSysadmin(t.deps);
    const sysToken = await login(api, sysadmin.username, sysadmin.password);
    expect((await api.delete(`/api/users/${gone.id}`, sysToken)).status).toBe(200);
    const heir = await createUser(t.deps);
    const res = await api.post(`/api/workspaces/${ws}/members`, { user_id: heir.id, role: 'Администратор' }, sysToken);
    expect(res.status).toBe(200);
    const heirToken = await login(api, heir.username, heir.password);
    expect(ok<WorkspaceDetails>(await api.get(`/api/workspaces/${ws}`, heirToken)).role).toBe('Администратор');
    // ... without gaining any other right there.
    expect((await api.put(`/api/workspaces/${ws}`, { name: 'x' }, sysToken)).status).toBe(403);
  });
});
