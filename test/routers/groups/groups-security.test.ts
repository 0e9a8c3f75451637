import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import {
  addToGroup,
  createGroup,
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

const SYSADMIN_ONLY = {
  anonymous: 401,
  plain: 403,
  viewer: 403,
  editor: 403,
  wsAdmin: 403,
  manager: 403,
  sysadmin: 200,
};
const ANY_USER = { anonymous: 401, plain: 200, viewer: 200, editor: 200, wsAdmin: 200, manager: 200, sysadmin: 200 };

describe('who may call the group operations', () => {
  it('POST /api/groups', async () => {
    expect(await statusesByRole(cast, (token) => api.post('/api/groups', { name: uniq('g') }, token))).toEqual(
      SYSADMIN_ONLY,
    );
  });

  it('PUT /api/groups/{id}', async () => {
    const g = await createGroup(t.deps);
    expect(await statusesByRole(cast, (token) => api.put(`/api/groups/${g.id}`, { description: 'x' }, token))).toEqual(
      SYSADMIN_ONLY,
    );
  });

  it('DELETE /api/groups/{id}', async () => {
    expect(
      await statusesByRole(cast, async (token) => api.delete(`/api/groups/${(await createGroup(t.deps)).id}`, token)),
    ).toEqual(SYSADMIN_ONLY);
  });

  it('POST /api/groups/{id}/members', async () => {
    const g = await createGroup(t.deps);
    const statuses = await statusesByRole(cast, async (token) =>
      api.post(`/api/groups/${g.id}/members`, { user_ids: [(await createUser(t.deps)).id] }, token),
    );
    expect(statuses).toEqual(SYSADMIN_ONLY);
  });

  it('POST /api/groups/{id}/members cannot be used to promote oneself to a system group', async () => {
    const managers = t.deps.systemGroups.workspaceManagers;
    const statuses = await statusesByRole(cast, (token, role) =>
      api.post(
        `/api/groups/${managers}/members`,
        { user_ids: [role === 'anonymous' ? cast.users.plain.id : cast.users[role].id] },
        token,
      ),
    );
    expect(statuses).toEqual(SYSADMIN_ONLY);
  });

  it('DELETE /api/groups/{id}/members/{userId}', async () => {
    const g = await createGroup(t.deps);
    const statuses = await statusesByRole(cast, async (token) => {
      const u = await createUser(t.deps);
      await addToGroup(t.deps, u.id, g.id);
      return api.delete(`/api/groups/${g.id}/members/${u.id}`, token);
    });
    expect(statuses).toEqual(SYSADMIN_ONLY);
  });

  it('reads are open to any user', async () => {
    const g = await createGroup(t.deps);
    for (const url of ['/api/groups', `/api/groups/${g.id}`, `/api/groups/${g.id}/members`]) {
      expect(await statusesByRole(cast, (token) => api.get(url, token)), url).toEqual(ANY_USER);
    }
  });
});
