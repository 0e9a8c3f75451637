import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, login } from '../../support/factories';
import { failure, ok, type ErrorEnvelope } from '../../support/rest';
import type { z } from 'zod';
import type { dictionaryOutput } from '../../../routers/service/schemas';

type Dictionary = z.output<typeof dictionaryOutput>;

const { t, api } = useTestApp({ BODY_LIMIT_BYTES: '65536' });
let adminToken: string;

beforeAll(async () => {
  const admin = await createSysadmin(t.deps);
  adminToken = await login(api, admin.username, admin.password);
});

const expectEnvelope = (body: ErrorEnvelope, code: number) => {
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(new Date(body.error.timestamp).toISOString()).toBe(body.error.timestamp);
  expect(JSON.stringify(body)).not.toMatch(/at .+\.ts:\d+|stack/);
};

describe('REST envelope and errors', () => {
  it('wraps success in {success, data}', async () => {
    const res = await api.get('/api/dictionary', adminToken);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(ok<Dictionary>(res).workspace_types.shared).toBe('Общее');
  });

  it('answers an unknown /api path with a 404 envelope, or 401 without a token', async () => {
    const res = await api.get('/api/no-such-thing', adminToken);
    expect(res.status).toBe(404);
    expectEnvelope(res.body, 404);
    const anon = await api.get('/api/no-such-thing');
    expect(anon.status).toBe(401);
    expectEnvelope(anon.body, 401);
    const outside = await api.get('/no-such-page');
    expect(outside.status).toBe(404);
    expectEnvelope(outside.body, 404);
  });

  it("answers a path that is no valid percent-encoded UTF-8 with a 400 envelope, not the router's own JSON", async () => {
    // The third matches no route at all: the not-found handler sees it, not the router.
    for (const url of [
      '/api/users/%ED%A0%80',
      '/api/no-such/%ED%A0%80',
      '/api/users/%ED%A0%80/no/such',
      `/api/users/${'1'.repeat(6000)}`,
    ]) {
      const res = await api.get(url, adminToken);
      expect(res.status, url.slice(0, 40)).toBe(400);
      expectEnvelope(res.body, 400);
      expect(res.body.error.message).toBe('Некорректный адрес запроса');
    }
  });

  it('answers malformed JSON with 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"username": "a", ',
    });
    expect(res.statusCode).toBe(400);
    expectEnvelope(res.json(), 400);
  });

  it('answers a body over the limit with 413 and a non-JSON body with 415', async () => {
    const big = await api.post('/api/auth/login', { username: 'x'.repeat(70_000), password: 'y' });
    expect(big.status).toBe(413);
    expectEnvelope(big.body, 413);
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(text.statusCode).toBe(415);
    expectEnvelope(text.json(), 415);
  });

  it('answers wrong types, blanks and unknown fields with 422 and a field map', async () => {
    const res = await api.post('/api/auth/login', { username: '   ', password: 5, extra_field: 1 });
    expect(res.status).toBe(422);
    expectEnvelope(res.body, 422);
    expect(failure(res).message).toBe('Ошибка валидации');
    expect(failure(res).errors).toEqual({
      username: 'must not be blank',
      password: 'must be a string',
      extraField: 'unknown field',
    });
  });

  it('reports nested field paths in the specification form (camelCase, bracketed indices)', async () => {
    const res = await api.put(
      '/api/mcp-tokens/settings',
      { enabled: true, allowed_account_types: ['local', 'robot'], access_group_id: null },
      adminToken,
    );
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'allowedAccountTypes[1]': 'must be one of: local, sso, service' });
  });

  it('checks the token before the body: no token is 401 even for an invalid body', async () => {
    const res = await api.put('/api/settings', { instance_name: 12 });
    expect(res.status).toBe(401);
    expectEnvelope(res.body, 401);
  });

  it('converts path and query parameters only where the schema wants numbers', async () => {
    const huge = await api.post('/api/mcp-tokens/99999999999/suspend', undefined, adminToken);
    expect(huge.status).toBe(422);
    const bad = await api.post('/api/mcp-tokens/abc/suspend', undefined, adminToken);
    expect(bad.status).toBe(422);
    expect(failure(bad).errors).toEqual({ id: 'must be a number' });
    const page = await api.get('/api/mcp-tokens', adminToken, { page: '-1', size: 'ten' });
    expect(page.status).toBe(422);
    expect(failure(page).errors).toEqual({ page: 'must be greater than or equal to 0', size: 'must be a number' });
    const badSort = await api.get('/api/mcp-tokens', adminToken, { sort: 'name;drop table users' });
    expect(badSort.status).toBe(422);
  });

  it('serves /trpc with the same procedures and error table', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/trpc/service.dictionary',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.statusCode).toBe(200);
    const anon = await t.app.inject({ method: 'GET', url: '/trpc/service.dictionary' });
    expect(anon.statusCode).toBe(401);
    // superjson wraps the error shape in `json`
    expect(anon.json().error.json.data.httpStatus).toBe(401);
    expect(anon.body).not.toMatch(/stack/);
  });
});
