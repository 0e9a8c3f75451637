import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import {
  addWorkspaceMember,
  createRoleCast,
  createUser,
  statusesByRole,
  uniq,
  type RoleCast,
} from '../../support/factories';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

/*
 * Non-members get 404 (the workspace does not exist for them); members without the right get 403. The system
 * administrator sees every workspace but has no role in it: 403 for its settings, yet may manage its members (the
 * way back into a workspace whose administrators are gone).
 */
const WORKSPACE_ADMIN = {
  anonymous: 401,
  plain: 404,
  viewer: 403,
  editor: 403,
  wsAdmin: 200,
  manager: 404,
  sysadmin: 403,
};
const MEMBER_ADMIN = { ...WORKSPACE_ADMIN, sysadmin: 200 };

describe('who may call the workspace operations', () => {
  it('POST /api/workspaces: only «Менеджеры рабочих пространств»', async () => {
    expect(await statusesByRole(cast, (token) => api.post('/api/workspaces', { name: uniq('ws') }, token))).toEqual({
      anonymous: 401,
      plain: 403,
      viewer: 403,
      editor: 403,
      wsAdmin: 403,
      manager: 200,
      sysadmin: 403,
    });
  });

  it('PUT /api/workspaces/{id}', async () => {
    expect(
      await statusesByRole(cast, (token) =>
        api.put(`/api/workspaces/${cast.workspaceId}`, { description: uniq('d') }, token),
      ),
    ).toEqual(WORKSPACE_ADMIN);
  });

  it('DELETE /api/workspaces/{id}', async () => {
    expect(
      await statusesByRole(cast, async (token) => api.delete(`/api/workspaces/${await cast.newWorkspace()}`, token)),
    ).toEqual(WORKSPACE_ADMIN);
  });

  it('POST /api/workspaces/{id}/members', async () => {
    const statuses = await statusesByRole(cast, async (token) =>
      api.post(
        `/api/workspaces/${cast.workspaceId}/members`,
        { user_id: (await createUser(t.deps)).id, role: 'Редактор' },
        token,
      ),
    );
    expect(statuses).toEqual(MEMBER_ADMIN);
  });

  it('POST /api/workspaces/{id}/members cannot be used to raise one’s own role', async () => {
    const statuses = await statusesByRole(cast, (token, role) =>
      api.post(
        `/api/workspaces/${cast.workspaceId}/members`,
        { user_id: role === 'anonymous' ? cast.users.plain.id : cast.users[role].id, role: 'Администратор' },
        token,
      ),
    );
    // The administrator and the editor/viewer are members already: 400 / 403; a stranger cannot see the workspace.
    expect(statuses).toEqual({
      anonymous: 401,
      plain: 404,
      viewer: 403,
      editor: 403,
      wsAdmin: 400,
      manager: 404,
      sysadmin: 200,
    });
  });

  it('PUT /api/workspaces/{id}/members/{memberId}', async () => {
    const statuses = await statusesByRole(cast, async (token) => {
      const memberId = await addWorkspaceMember(t.deps, cast.workspaceId, {
        userId: (await createUser(t.deps)).id,
        role: 'Наблюдатель',
      });
      return api.put(`/api/workspaces/${cast.workspaceId}/members/${memberId}`, { role: 'Редактор' }, token);
    });
    expect(statuses).toEqual(MEMBER_ADMIN);
  });

  it('DELETE /api/workspaces/{id}/members/{memberId}', async () => {
    const statuses = await statusesByRole(cast, async (token) => {
      const memberId = await addWorkspaceMember(t.deps, cast.workspaceId, {
        userId: (await createUser(t.deps)).id,
        role: 'Наблюдатель',
      });
      return api.delete(`/api/workspaces/${cast.workspaceId}/members/${memberId}`, token);
    });
    expect(statuses).toEqual(MEMBER_ADMIN);
  });

  it('reads: members see the workspace and its members, others get 404', async () => {
    const READ = { anonymous: 401, plain: 404, viewer: 200, editor: 200, wsAdmin: 200, manager: 404, sysadmin: 200 };
    expect(await statusesByRole(cast, (token) => api.get(`/api/workspaces/${cast.workspaceId}`, token))).toEqual(READ);
    expect(
      await statusesByRole(cast, (token) => api.get(`/api/workspaces/${cast.workspaceId}/members`, token)),
    ).toEqual(READ);
  });
});
