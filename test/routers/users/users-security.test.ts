import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createRoleCast, createUser, statusesByRole, uniq, type RoleCast } from '../../support/factories';

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

// Account administration is for system administrators only; workspace roles give no rights over accounts.
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

describe('who may call the user operations', () => {
  it('POST /api/users', async () => {
    const statuses = await statusesByRole(cast, (token) =>
      api.post('/api/users', { username: uniq('u'), password: 'Strong-pass-1' }, token),
    );
    expect(statuses).toEqual(SYSADMIN_ONLY);
  });

  it('PUT /api/users/{id}', async () => {
    const target = await createUser(t.deps);
    expect(
      await statusesByRole(cast, (token) => api.put(`/api/users/${target.id}`, { full_name: 'X' }, token)),
    ).toEqual(SYSADMIN_ONLY);
  });

  it('DELETE /api/users/{id}', async () => {
    const statuses = await statusesByRole(cast, async (token) =>
      api.delete(`/api/users/${(await createUser(t.deps)).id}`, token),
    );
    expect(statuses).toEqual(SYSADMIN_ONLY);
  });

  it('PUT /api/users/{id}/password', async () => {
    const target = await createUser(t.deps);
    expect(
      await statusesByRole(cast, (token) =>
        api.put(`/api/users/${target.id}/password`, { new_password: 'Strong-pass-2' }, token),
      ),
    ).toEqual(SYSADMIN_ONLY);
  });

  it('PUT /api/users/{id}/attributes (and GET, also admin-only)', async () => {
    const target = await createUser(t.deps);
    expect(
      await statusesByRole(cast, (token) =>
        api.put(`/api/users/${target.id}/attributes`, { attributes: { a: ['1'] } }, token),
      ),
    ).toEqual(SYSADMIN_ONLY);
    expect(await statusesByRole(cast, (token) => api.get(`/api/users/${target.id}/attributes`, token))).toEqual(
      SYSADMIN_ONLY,
    );
  });

  it('PUT /api/users/me/password: any user for their own account', async () => {
    const statuses = await statusesByRole(cast, async (token, role) => {
      if (role === 'anonymous')
        return api.put('/api/users/me/password', { old_password: 'Any-pass-1', new_password: 'Any-pass-2' }, token);
      const { password } = cast.users[role];
      const temporary = `Tmp-${uniq('p')}-1`;
      const res = await api.put('/api/users/me/password', { old_password: password, new_password: temporary }, token);
      // Put the password back so that the cast can still log in.
      await api.put('/api/users/me/password', { old_password: temporary, new_password: password }, token);
      return res;
    });
    expect(statuses).toEqual(ANY_USER);
  });

  it('reads: lists, profiles, groups and attribute keys are open to any user', async () => {
    const target = await createUser(t.deps);
    for (const url of [
      '/api/users',
      '/api/users/me',
      `/api/users/${target.id}`,
      `/api/users/${target.id}/groups`,
      '/api/user-attributes',
    ]) {
      expect(await statusesByRole(cast, (token) => api.get(url, token)), url).toEqual(ANY_USER);
    }
  });
});
