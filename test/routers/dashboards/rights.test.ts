import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import {
  postDashboard,
  type DashboardDetails,
  type DashboardPage,
  type DashboardSchema,
  type DashboardView,
} from './world';

/*
 * Dashboards are one more kind of the one access policy: object rights (/api/access/dashboard/...) apply to them
 * as to any object, without a check of their own.
 */

const { t, api } = useTestApp();
let cast: RoleCast;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});

describe('object rights on a dashboard', () => {
  it('a view right lets a non-member read it and list it; an edit right makes them an owner: change and delete', async () => {
    const d = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
    const outsider = cast.tokens.plain;
    expect((await api.get(`/api/dashboard/${d.id}`, outsider)).status).toBe(404);

    ok(
      await api.put(
        `/api/access/dashboard/${d.id}/users/${cast.users.plain.id}`,
        { right: 'view' },
        cast.tokens.editor,
      ),
    );
    expect(ok<DashboardDetails>(await api.get(`/api/dashboard/${d.id}`, outsider)).id).toBe(d.id);
    expect(ok<DashboardSchema>(await api.get(`/api/dashboard/${d.id}/schema`, outsider)).id).toBe(d.id);
    const listed = ok<DashboardPage>(await api.get('/api/dashboard', outsider, { query: d.name }));
    expect(listed.content.map((x) => x.id)).toEqual([d.id]);
    expect((await api.put(`/api/dashboard/${d.id}`, { name: 'x' }, outsider)).status).toBe(403);

    ok(
      await api.put(
        `/api/access/dashboard/${d.id}/users/${cast.users.plain.id}`,
        { right: 'edit' },
        cast.tokens.editor,
      ),
    );
    expect(ok<DashboardView>(await api.put(`/api/dashboard/${d.id}`, { name: 'Правка по праву' }, outsider)).name).toBe(
      'Правка по праву',
    );
    expect((await api.put(`/api/dashboard/${d.id}/schema`, {}, outsider)).status).toBe(200);
    expect((await api.delete(`/api/dashboard/${d.id}`, outsider)).status).toBe(200);
    expect((await api.get(`/api/dashboard/${d.id}`, cast.tokens.editor)).status).toBe(404);
  });
});
