import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../../routers';
import { useTestApp } from '../../support/app';
import { createUser } from '../../support/factories';

const { t } = useTestApp();
let baseUrl: string;

beforeAll(async () => {
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

const client = (token?: string) =>
  createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${baseUrl}/trpc`,
        transformer: superjson,
        headers: () => (token ? { authorization: `Bearer ${token}` } : {}),
      }),
    ],
  });

describe('/trpc with @trpc/client', () => {
  it('logs in and calls the same procedures as REST, typed', async () => {
    const u = await createUser(t.deps);
    const session = await client().auth.login.mutate({ username: u.username, password: u.password });
    expect(session.expires_in).toBe(900);
    const authed = client(session.token);
    const [settings, dict] = await Promise.all([authed.service.getSettings.query(), authed.service.dictionary.query()]);
    expect(settings.session_token_ttl).toBe(900);
    expect(dict.stages['2']).toBe('Прод');
  });

  it('reports errors from the same error table', async () => {
    const err = await client()
      .service.getSettings.query()
      .catch((e) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect(err.data.httpStatus).toBe(401);
    const bad = await client()
      .auth.login.mutate({ username: ' ', password: 'x' })
      .catch((e) => e);
    expect(bad.data.httpStatus).toBe(422);
    expect(bad.data.errors).toEqual({ username: 'must not be blank' });
    expect(bad.message).toBe('Ошибка валидации');
  });
});

describe('/trpc bodies', () => {
  it('a multipart body is refused with 415, for a query or a mutation, never a 500', async () => {
    const form = new FormData();
    form.append('a', 'b');
    for (const url of ['/trpc/users.me', '/trpc/widgets.list', '/trpc/auth.login']) {
      const res = await t.app.inject({ method: 'POST', url, payload: form });
      expect(res.statusCode, url).toBe(415);
      expect(res.json()).toMatchObject({
        success: false,
        error: { code: 415, message: 'Неподдерживаемый формат тела запроса' },
      });
    }
  });
});
