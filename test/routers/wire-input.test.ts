import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app';
import { TEST_ADMIN } from '../support/constants';
import { createSysadmin, login } from '../support/factories';
import { upload } from './data-sources/helpers';

/*
 * The shared wire types of routers/common.ts at the edge: text with NUL or a lone surrogate and ids outside the id
 * columns' range are 422 with the field path (they used to reach PostgreSQL and come back as 500).
 */

const { t, api } = useTestApp();
let token: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  token = await login(api, admin.username, admin.password);
});

const INVALID = 'must not contain NUL or invalid characters';

describe('text with NUL or a lone surrogate', () => {
  it('is a 422 on login, naming the field', async () => {
    for (const username of [`${TEST_ADMIN.username}\u0000`, 'a\uD800b', '\uDC00']) {
      const res = await api.post('/api/auth/login', { username, password: 'x' });
      expect(res.status).toBe(422);
      expect(res.body.error.errors).toEqual({ username: INVALID });
    }
  });

  it('is a 422 on PUT /api/settings, on bodies, nested values, record keys and query strings', async () => {
    const settings = await api.put('/api/settings', { instance_name: 'a\u0000' }, token);
    expect([settings.status, settings.body.error?.errors]).toEqual([422, { instanceName: INVALID }]);

    const group = await api.post('/api/groups', { name: 'g', description: 'x\uD83D' }, token);
    expect([group.status, group.body.error?.errors]).toEqual([422, { description: INVALID }]);

    const user = await api.put('/api/users/1', { full_name: 'w\u0000' }, token);
    expect([user.status, user.body.error?.errors]).toEqual([422, { fullName: INVALID }]);

    const preview = await api.post(
      '/api/widget/preview',
      { dataset_id: 1, rows: [{ id: 'a', settings: { k: ['ok', 'b\u0000'] } }] },
      token,
    );
    expect(preview.status).toBe(422);
    expect(preview.body.error.errors).toEqual({ 'rows[0].settings.k[1]': INVALID });

    const attributes = await api.put(`/api/users/1/attributes`, { attributes: { 'k\u0000': ['v'] } }, token);
    expect(attributes.status).toBe(422);

    const list = await api.get('/api/dataset?query=%00', token);
    expect([list.status, list.body.error?.errors]).toEqual([422, { query: INVALID }]);
  });

  it('is a 422 in multipart fields of the file routes', async () => {
    const res = await upload(
      api,
      'POST',
      '/api/files',
      token,
      { name: 'a.csv', content: 'a\n1\n' },
      { name: 'n\u0000' },
    );
    expect([res.status, res.body.error?.errors]).toEqual([422, { name: INVALID }]);
  });

  it('in a bearer token is a 401', async () => {
    for (const bad of ['a\u0000b', 'apt_\u0000', `${token}\u0000`]) {
      const res = await api.call('GET', '/api/users/me', { headers: { authorization: `Bearer ${bad}` } });
      expect(res.status).toBe(401);
    }
  });
});

describe('ids outside 1..2147483647', () => {
  it('are a 422 in paths, queries and bodies, on every id route', async () => {
    for (const [method, url] of [
      ['GET', '/api/dataset/2147483648'],
      ['PUT', '/api/dataset/2147483648'],
      ['DELETE', '/api/dataset/99999999999999999999'],
      ['GET', '/api/dataset/2147483648/dependencies'],
      ['DELETE', '/api/files/2147483648'],
      ['GET', '/api/widget/0'],
      ['GET', '/api/data-source/-1'],
      ['GET', '/api/users/1.5'],
    ] as const) {
      const res = await api.call(method, url, { token, body: method === 'PUT' ? {} : undefined });
      expect(res.status, `${method} ${url}`).toBe(422);
      expect(Object.keys(res.body.error.errors), `${method} ${url}`).toContain('id');
    }
    const copy = await api.post('/api/dataset', { name: 'd', workspace_id: 2 ** 31 }, token);
    expect([copy.status, copy.body.error?.errors]).toEqual([
      422,
      { workspaceId: 'must be less than or equal to 2147483647' },
    ]);
    const sources = await api.post('/api/dataset', { name: 'd', data_source_ids: [2 ** 53 + 1] }, token);
    expect(sources.status).toBe(422);
    const file = await upload(
      api,
      'POST',
      '/api/files',
      token,
      { name: 'a.csv', content: 'a\n1\n' },
      { workspace_id: '9007199254740993' },
    );
    expect(file.status).toBe(422);
  });

  it('written other than in decimal are a 422 in query strings', async () => {
    for (const v of ['0x10', '1e3', 'NaN', 'Infinity', '']) {
      const res = await api.get(`/api/dataset?workspaceId=${encodeURIComponent(v)}`, token);
      expect(res.status, v).toBe(422);
    }
  });
});
