import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defineRawRoute,
  rawOperationDocs,
  registerRawRoutes,
  type RawRoute,
  type RawScope,
} from '../../../adapters/rest/raw-route';
import { AppError, unauthorized } from '../../../server/kernel/errors';

/*
 * The raw-route adapter on a bare fastify app, without the platform around it: what it promises every raw route
 * (auth before the body is read, the envelope for any failure, the handler's own reply kept, the scope's plugins
 * only for its routes, the OpenAPI entry) holds whatever the route does.
 */

interface Deps {
  name: string;
}
interface Actor {
  user: string;
}

interface Envelope<T = unknown> {
  success: boolean;
  data?: T;
  error?: { code: number; message: string; timestamp: string; errors?: Record<string, string> };
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(routes: RawRoute<Deps, Actor>[]) {
  const calls = { authenticate: 0, handler: 0, unexpected: [] as unknown[] };
  app = Fastify();
  registerRawRoutes(app, routes, {
    deps: { name: 'deps' },
    authenticate: async (req) => {
      calls.authenticate++;
      if (req.headers.authorization !== 'Bearer good') throw unauthorized();
      return { user: 'ann' };
    },
    onUnexpected: (_req, err) => calls.unexpected.push(err),
  });
  await app.ready();
  const call = async <T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    opts: { token?: string; body?: string; type?: string } = {},
  ) => {
    const res = await app!.inject({
      method,
      url,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(opts.type ? { 'content-type': opts.type } : {}),
      },
      payload: opts.body,
    });
    return { status: res.statusCode, headers: res.headers, body: (res.body ? res.json() : undefined) as Envelope<T> };
  };
  return { calls, call };
}

describe('registerRawRoutes', () => {
  it('authenticates a bearer route before the body is parsed, and hands the handler the actor, deps and path params', async () => {
    let seen: unknown;
    const route = defineRawRoute<Deps, Actor>({
      method: 'POST',
      path: '/api/things/{id}',
      auth: 'bearer',
      doc: { summary: 's', tags: ['Files'] },
      handler: async (req, _reply, ctx) => {
        seen = { params: req.params, body: req.body, deps: ctx.deps.name, actor: ctx.actor.user };
        return { ok: true };
      },
    });
    const { calls, call } = await serve([route]);

    const anonymous = await call('POST', '/api/things/7', { body: '{broken', type: 'application/json' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error?.message).toBe('Требуется аутентификация');
    expect(seen).toBeUndefined();

    const res = await call<{ ok: boolean }>('POST', '/api/things/7', {
      token: 'good',
      body: '{"a":1}',
      type: 'application/json',
    });
    expect([res.status, res.body]).toEqual([200, { success: true, data: { ok: true } }]);
    expect(seen).toEqual({ params: { id: '7' }, body: { a: 1 }, deps: 'deps', actor: 'ann' });
    expect(calls.authenticate).toBe(2);
  });

  it('answers a thrown AppError with its status and anything else with a 500 envelope, logged and without a stack', async () => {
    const boom = new Error('secret detail');
    const { calls, call } = await serve([
      defineRawRoute<Deps, Actor>({
        method: 'GET',
        path: '/api/known',
        auth: 'bearer',
        doc: {},
        handler: async () => {
          throw new AppError('not_found', 'Нет такого файла');
        },
      }),
      defineRawRoute<Deps, Actor>({
        method: 'GET',
        path: '/api/broken',
        auth: 'bearer',
        doc: {},
        handler: async () => {
          throw boom;
        },
      }),
    ]);

    const known = await call('GET', '/api/known', { token: 'good' });
    expect([known.status, known.body.error?.code, known.body.error?.message]).toEqual([404, 404, 'Нет такого файла']);
    expect(calls.unexpected).toEqual([]);

    const broken = await call('GET', '/api/broken', { token: 'good' });
    expect([broken.status, broken.body.success, broken.body.error?.message]).toEqual([
      500,
      false,
      'Внутренняя ошибка сервера',
    ]);
    expect(JSON.stringify(broken.body)).not.toMatch(/secret detail|stack|\.ts:\d+/);
    expect(calls.unexpected).toEqual([boom]);
  });

  it('keeps the reply of a handler that answers by itself, and runs a public route without authentication', async () => {
    let actor: unknown = 'unset';
    const { calls, call } = await serve([
      defineRawRoute<Deps, Actor>({
        method: 'GET',
        path: '/api/public/go',
        auth: 'public',
        doc: {},
        handler: async (_req, reply, ctx) => {
          actor = ctx.actor;
          return reply.redirect('/somewhere', 302);
        },
      }),
    ]);
    const res = await app!.inject({ method: 'GET', url: '/api/public/go' });
    expect([res.statusCode, res.headers.location]).toEqual([302, '/somewhere']);
    expect(actor).toBeUndefined();
    expect(calls.authenticate).toBe(0);
    expect((await call('GET', '/api/public/go')).status).toBe(302);
  });

  it('registers a scope once, with its plugins applying to its own routes only', async () => {
    let setups = 0;
    const scope: RawScope<Deps> = {
      async setup(instance, deps) {
        setups++;
        instance.decorateRequest('scopeName', deps.name);
      },
    };
    const read = (path: string, withScope: boolean) =>
      defineRawRoute<Deps, Actor>({
        method: 'GET',
        path,
        auth: 'bearer',
        doc: {},
        ...(withScope ? { scope } : {}),
        handler: async (req) => (req as unknown as { scopeName?: string }).scopeName ?? 'none',
      });
    const { call } = await serve([read('/api/a', true), read('/api/b', true), read('/api/c', false)]);
    expect(setups).toBe(1);
    expect((await call<string>('GET', '/api/a', { token: 'good' })).body.data).toBe('deps');
    expect((await call<string>('GET', '/api/b', { token: 'good' })).body.data).toBe('deps');
    expect((await call<string>('GET', '/api/c', { token: 'good' })).body.data).toBe('none');
  });
});

describe('rawOperationDocs', () => {
  it('gives each route its OpenAPI entry at the catalogue path, with security from its auth', () => {
    const handler = async () => null;
    const docs = rawOperationDocs<Deps, Actor>([
      defineRawRoute({
        method: 'PUT',
        path: '/api/files/{id}',
        auth: 'bearer',
        doc: { operationId: 'x', tags: ['Files'] },
        handler,
      }),
      defineRawRoute({
        method: 'GET',
        path: '/api/public/page',
        auth: 'public',
        doc: { operationId: 'y', tags: ['Files'] },
        handler,
      }),
    ]);
    expect(docs).toEqual([
      {
        method: 'put',
        path: '/api/files/{id}',
        operation: { operationId: 'x', tags: ['Files'], security: [{ bearerAuth: [] }] },
      },
      { method: 'get', path: '/api/public/page', operation: { operationId: 'y', tags: ['Files'], security: [] } },
    ]);
  });
});
