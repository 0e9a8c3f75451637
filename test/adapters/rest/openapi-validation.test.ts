import Fastify from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createSysadmin, createUser, enableApiTokens, issueApiToken, login } from '../../support/factories';
import { documentChecker, validateInjectedResponses, type Exchange } from '../../support/openapi-validation';

/*
 * The check every test answer goes through (test/support/openapi-validation.ts): what it flags against the served
 * document, and that a mismatch fails the call that got it. The MCP endpoint and the export download are checked
 * here through fastify.inject, as the REST tests call them.
 */

const { t, api } = useTestApp();
let check: (ex: Exchange) => string | null | undefined;

beforeAll(async () => {
  check = documentChecker((await api.get('/api/v3/api-docs')).body);
});

const json = (status: number, body: unknown): Omit<Exchange, 'method' | 'url'> => ({
  authorized: true,
  hasBody: false,
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(body),
});
const envelope = (status: number) =>
  json(status, { success: false, error: { code: status, message: 'x', timestamp: new Date().toISOString() } });
const me = { method: 'GET', url: '/api/users/me' };

describe('the check against the served document', () => {
  it('passes an answer the document describes, and names what is wrong with one it does not', () => {
    expect(check({ ...me, ...envelope(401) })).toBeUndefined();
    expect(check({ ...me, ...envelope(418) })).toMatch(
      /^GET \/api\/users\/me \(GET \/api\/users\/me\) answered 418, which the document does not list \(documented: 200, 400, 401, 403, 500\)$/,
    );
    expect(check({ ...me, ...envelope(401), contentType: 'text/html' })).toMatch(
      /answered 401 as text\/html; the document says 401 is application\/json/,
    );
    expect(check({ ...me, ...json(200, { success: true, data: { id: 'seven' } }) })).toMatch(
      /GET \/api\/users\/me .* 200 application\/json: the body does not match the documented schema:\n {2}body\/data must have required property/,
    );
    expect(check({ ...me, ...json(401, { success: false }) })).toMatch(/body must have required property 'error'/);
    expect(check({ ...me, ...json(200, 'not json'), body: '{' })).toMatch(/the body is not JSON/);
  });

  it('takes a literal segment before a parameter, as the router does, and query strings off', () => {
    // /api/users/me is not /api/users/{id}: the profile of another schema would fail here.
    expect(check({ method: 'GET', url: '/api/users/me?x=1', ...envelope(403) })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/users/12', ...envelope(404) })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/users/12', ...envelope(413) })).toMatch(/^GET \/api\/users\/\{id\} /);
  });

  it('holds paths of no operation to the not-found envelope, and skips only the listed non-operations', () => {
    expect(check({ method: 'GET', url: '/api/no-such-thing', ...envelope(404) })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/no-such-thing', ...envelope(401), authorized: false })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/no-such-thing', ...json(200, {}) })).toMatch(
      /is in no operation of the document, yet it answered 200/,
    );
    expect(check({ method: 'PATCH', url: '/api/users/me', ...envelope(500) })).toMatch(/in no operation/);
    // A body is read before the router's not-found answer; a share-link path is rate limited even when unknown.
    expect(check({ method: 'POST', url: '/api/no-such-thing', ...envelope(413) })).toMatch(/in no operation/);
    expect(check({ method: 'POST', url: '/api/no-such-thing', ...envelope(413), hasBody: true })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/public/no-such-thing', ...envelope(429) })).toBeUndefined();
    expect(check({ method: 'GET', url: '/api/users/%ED%A0%80/x', ...envelope(400) })).toBeUndefined();
    for (const url of ['/trpc/users.me', '/docs/', '/s/abc', '/api/v3/api-docs'])
      expect(check({ method: 'GET', url, ...json(200, {}) }), url).toBeNull();
    expect(check({ method: 'GET', url: '/mcp', ...json(405, {}) })).toBeNull();
    expect(check({ method: 'POST', url: '/trpcx', ...json(200, {}) })).toMatch(/in no operation/);
  });

  it('checks a download by its media type only', () => {
    const file = {
      method: 'GET',
      url: '/api/exports/5/file',
      authorized: true,
      hasBody: false,
      status: 200,
      body: 'a',
    };
    for (const type of [
      'text/csv; charset=utf-8',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/pdf',
      'image/png',
    ])
      expect(check({ ...file, contentType: type }), type).toBeUndefined();
    expect(check({ ...file, contentType: 'application/octet-stream' })).toMatch(
      /answered 200 as application\/octet-stream; the document says 200 is text\/csv or /,
    );
  });
});

describe('a mismatch fails the call that got it', () => {
  it('throws from app.inject, with the document fetched once per app', async () => {
    const app = Fastify();
    let fetched = 0;
    app.get('/api/v3/api-docs', async () => {
      fetched++;
      return {
        openapi: '3.1.0',
        paths: {
          '/api/thing': {
            get: {
              responses: {
                '200': {
                  content: { 'application/json': { schema: { type: 'object', required: ['ok'] } } },
                },
              },
            },
          },
        },
      };
    });
    app.get('/api/thing', async (req, reply) =>
      reply.code((req.query as { status?: string }).status === '418' ? 418 : 200).send({ ok: true }),
    );
    await app.ready();
    validateInjectedResponses(app);
    try {
      expect((await app.inject({ url: '/api/thing' })).statusCode).toBe(200);
      await expect(app.inject({ url: '/api/thing?status=418' })).rejects.toThrow(
        'OpenAPI: GET /api/thing (GET /api/thing?status=418) answered 418, which the document does not list (documented: 200)',
      );
      expect(fetched).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('POST /mcp answers JSON-RPC 2.0 as documented (each answer checked by the helper)', () => {
  let apiToken: string;
  const mcp = (body: unknown, accept = 'application/json, text/event-stream') =>
    api.call('POST', '/mcp', { token: apiToken, body, headers: { accept } });

  beforeAll(async () => {
    const admin = await createSysadmin(t.deps);
    await enableApiTokens(api, await login(api, admin.username, admin.password));
    const user = await createUser(t.deps);
    apiToken = await issueApiToken(api, await login(api, user.username, user.password));
  });

  it('answers a request with its JSON-RPC result, a notification with 202, a malformed message and a wrong Accept with a JSON-RPC error', async () => {
    const init = await mcp({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    });
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: expect.any(Object) } });
    const listed = await mcp({ jsonrpc: '2.0', id: 'two', method: 'tools/list' });
    expect(listed.body.result.tools.length).toBeGreaterThan(0);
    expect((await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const malformed = await mcp({ hello: 'world' });
    expect(malformed).toMatchObject({ status: 400, body: { jsonrpc: '2.0', error: { code: -32700 }, id: null } });
    expect((await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, 'text/html')).status).toBe(406);
    // Before the transport: no token and a body that is no JSON answer the error envelope.
    expect((await api.call('POST', '/mcp', { body: {} })).status).toBe(401);
    const notJson = await api.call('POST', '/mcp', {
      token: apiToken,
      body: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson).toMatchObject({ status: 400, body: { success: false } });
  });
});
