import { expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { failure, type RestResponse } from '../../support/rest';
import { loginAdmin } from '../../support/factories';

/*
 * The unauthenticated share-link paths (/api/public/..., the viewer page /s/..., the publicLink procedures over /trpc)
 * are rate limited per client address (PUBLIC_RATE_LIMIT_PER_MINUTE); authenticated routes are not. Each test speaks
 * from an address of its own, so that each starts with a whole budget of 5.
 */

const { t, api } = useTestApp({ PUBLIC_RATE_LIMIT_PER_MINUTE: '5' });

const DEAD = 'E'.repeat(43);
const stateInput = encodeURIComponent('{"json":{"token":"x"}}');

/** A GET from one client address, without Authorization. */
async function from(remoteAddress: string, url: string): Promise<RestResponse> {
  const res = await t.app.inject({ method: 'GET', url, remoteAddress });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

it('past the limit a public path answers 429 with Retry-After in the envelope; other routes are untouched', async () => {
  const admin = await loginAdmin(api);
  const path = `/api/public/link/${DEAD}`;
  for (let i = 0; i < 5; i++) expect((await api.get(path)).status).toBe(404);
  const limited = await api.get(path);
  expect(limited.status).toBe(429);
  expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
  expect(failure(limited)).toMatchObject({ code: 429, message: 'Слишком много запросов, повторите позже' });
  // The page and the /trpc form of the viewer share the address's budget.
  expect((await api.get(`/s/${DEAD}`)).status).toBe(429);
  expect((await api.get(`/trpc/publicLink.get?input=${stateInput}`)).status).toBe(429);
  for (let i = 0; i < 10; i++) expect((await api.get('/api/users/me', admin)).status).toBe(200);
});

it('the budget is per client address: another address is not limited', async () => {
  for (let i = 0; i < 6; i++) await from('10.0.0.1', `/api/public/link/${DEAD}`);
  expect((await from('10.0.0.1', `/api/public/link/${DEAD}`)).status).toBe(429);
  expect((await from('10.0.0.2', `/api/public/link/${DEAD}`)).status).toBe(404);
});

it('a batched /trpc call pays for each public procedure it names, also behind another procedure', async () => {
  const three = `/trpc/publicLink.get,publicLink.get,publicLink.get?batch=1&input=${encodeURIComponent(
    JSON.stringify({ 0: { json: { token: 'x' } }, 1: { json: { token: 'x' } }, 2: { json: { token: 'x' } } }),
  )}`;
  const first = await from('10.0.1.1', three);
  expect(first.status).toBe(404); // three NOT_FOUND answers: the procedures ran
  // 3 spent, 3 more would pass 5: the whole batch is refused.
  const second = await from('10.0.1.1', three);
  expect(second.status).toBe(429);
  expect(failure(second).code).toBe(429);

  // A public procedure batched after an authenticated one is still counted.
  const mixed = `/trpc/users.me,publicLink.get?batch=1&input=${encodeURIComponent(
    JSON.stringify({ 1: { json: { token: 'x' } } }),
  )}`;
  for (let i = 0; i < 5; i++) expect((await from('10.0.1.2', mixed)).status).not.toBe(429);
  expect((await from('10.0.1.2', mixed)).status).toBe(429);
});

it('percent-encoded procedure names and paths are counted as what they are routed to', async () => {
  // tRPC decodes the procedure path (twice: the router's parameter, then its own decodeURIComponent).
  for (const [i, path] of ['%70ublicLink.get', '%2570ublicLink.get'].entries()) {
    const ip = `10.0.2.${i + 1}`;
    for (let n = 0; n < 5; n++) expect((await from(ip, `/trpc/${path}?input=${stateInput}`)).status).toBe(404);
    expect((await from(ip, `/trpc/${path}?input=${stateInput}`)).status).toBe(429);
  }
  // The router decodes REST paths too: /api/%70ublic/... is /api/public/...
  for (let n = 0; n < 5; n++) expect((await from('10.0.2.9', `/api/%70ublic/link/${DEAD}`)).status).toBe(404);
  expect((await from('10.0.2.9', `/api/%70ublic/link/${DEAD}`)).status).toBe(429);
});
