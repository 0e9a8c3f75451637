import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import {
  createGroup,
  createSharedWorkspace,
  createSysadmin,
  createUser,
  enableApiTokens,
  issueApiToken,
  login,
  uniq,
} from '../../support/factories';
import { ok } from '../../support/rest';
import type { z } from 'zod';
import type { loginOutput } from '../../../routers/auth/schemas';
import type { meOutput } from '../../../routers/users/schemas';
import type { listWorkspacesOutput, workspaceDetails, workspaceView } from '../../../routers/workspaces/schemas';

type WorkspacePage = z.output<typeof listWorkspacesOutput>;
type WorkspaceView = z.output<typeof workspaceView>;
type WorkspaceDetails = z.output<typeof workspaceDetails>;
type Me = z.output<typeof meOutput>;
type Login = z.output<typeof loginOutput>;

/*
 * Rights that come from groups follow the token: a session token carries the groups as at login (a change needs a new
 * login), an API token acts with the owner's current groups.
 */
const { t, api } = useTestApp();
let adminToken: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
  await enableApiTokens(api, adminToken);
});

const createWorkspace = (token: string) => api.post('/api/workspaces', { name: uniq('ws') }, token);
const managers = () => t.deps.systemGroups.workspaceManagers;

describe('«Менеджеры рабочих пространств» through the REST API', () => {
  it('a session token keeps the groups of its login: 403 until a new login, then 200', async () => {
    const u = await createUser(t.deps);
    const oldToken = await login(api, u.username, u.password);
    expect((await createWorkspace(oldToken)).status).toBe(403);

    expect((await api.post(`/api/groups/${managers()}/members`, { user_ids: [u.id] }, adminToken)).status).toBe(200);
    expect((await createWorkspace(oldToken)).status).toBe(403);
    expect(ok<Me>(await api.get('/api/users/me', oldToken))).toMatchObject({ is_workspace_manager: false });

    const newToken = await login(api, u.username, u.password);
    const created = await createWorkspace(newToken);
    expect(created.status).toBe(200);
    expect(ok<WorkspaceView>(created).role).toBe('Администратор');

    // Removal works the same way round: the newer token keeps the right until the next login.
    expect((await api.delete(`/api/groups/${managers()}/members/${u.id}`, adminToken)).status).toBe(200);
    expect((await createWorkspace(newToken)).status).toBe(200);
    expect((await createWorkspace(await login(api, u.username, u.password))).status).toBe(403);
  });

  it('a refreshed session picks up the current groups', async () => {
    const u = await createUser(t.deps);
    const session = ok<Login>(await api.post('/api/auth/login', { username: u.username, password: u.password }));
    await api.post(`/api/groups/${managers()}/members`, { user_ids: [u.id] }, adminToken);
    const renewed = ok<Login>(await api.post('/api/auth/refresh', { refresh_token: session.refresh_token }));
    expect((await createWorkspace(renewed.token)).status).toBe(200);
  });

  it('an API token acts with the owner’s current groups at once, both ways', async () => {
    const u = await createUser(t.deps);
    const apiToken = await issueApiToken(api, await login(api, u.username, u.password));
    expect((await createWorkspace(apiToken)).status).toBe(403);
    await api.post(`/api/groups/${managers()}/members`, { user_ids: [u.id] }, adminToken);
    expect((await createWorkspace(apiToken)).status).toBe(200);
    expect(ok<Me>(await api.get('/api/users/me', apiToken))).toMatchObject({
      is_workspace_manager: true,
      token_kind: 'api',
    });
    await api.delete(`/api/groups/${managers()}/members/${u.id}`, adminToken);
    expect((await createWorkspace(apiToken)).status).toBe(403);
  });
});

describe('workspace membership through a group', () => {
  it('follows the session snapshot: 404 with the old token, the group role after a new login', async () => {
    const g = await createGroup(t.deps);
    const owner = await createUser(t.deps);
    const ws = await createSharedWorkspace(t.deps, [
      { userId: owner.id, role: 'Администратор' },
      { groupId: g.id, role: 'Редактор' },
    ]);
    const u = await createUser(t.deps);
    const oldToken = await login(api, u.username, u.password);
    expect((await api.get(`/api/workspaces/${ws}`, oldToken)).status).toBe(404);

    await api.post(`/api/groups/${g.id}/members`, { user_ids: [u.id] }, adminToken);
    expect((await api.get(`/api/workspaces/${ws}`, oldToken)).status).toBe(404);
    expect(ok<WorkspacePage>(await api.get('/api/workspaces', oldToken, { type: 'shared' })).content).toEqual([]);

    const newToken = await login(api, u.username, u.password);
    const res = await api.get(`/api/workspaces/${ws}`, newToken);
    expect(res.status).toBe(200);
    expect(ok<WorkspaceDetails>(res).role).toBe('Редактор');
    expect(
      ok<WorkspacePage>(await api.get('/api/workspaces', newToken, { type: 'shared' })).content.map((w) => w.id),
    ).toEqual([ws]);
    // Редактор through the group is not Администратор.
    expect((await api.put(`/api/workspaces/${ws}`, { name: 'x' }, newToken)).status).toBe(403);
  });

  it('takes the strongest of the direct and the group role, and an API token sees group changes at once', async () => {
    const g = await createGroup(t.deps);
    const u = await createUser(t.deps);
    const ws = await createSharedWorkspace(t.deps, [
      { userId: u.id, role: 'Наблюдатель' },
      { groupId: g.id, role: 'Администратор' },
    ]);
    const apiToken = await issueApiToken(api, await login(api, u.username, u.password));
    expect(ok<WorkspaceDetails>(await api.get(`/api/workspaces/${ws}`, apiToken)).role).toBe('Наблюдатель');
    await api.post(`/api/groups/${g.id}/members`, { user_ids: [u.id] }, adminToken);
    expect(ok<WorkspaceDetails>(await api.get(`/api/workspaces/${ws}`, apiToken)).role).toBe('Администратор');
    expect((await api.put(`/api/workspaces/${ws}`, { description: 'через группу' }, apiToken)).status).toBe(200);
  });
});
