import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../server/app/config';
import { useTestApp, type TestApp } from '../../support/app';
import { createRoleCast } from '../../support/factories';
import { ok, type Rest } from '../../support/rest';
import { postDashboard } from '../../routers/dashboards/world';

/*
 * TRUST_PROXY: behind a reverse proxy every viewer arrives from the proxy's address. Only when the proxy is trusted
 * does the client address come from X-Forwarded-For; then each viewer has a budget of its own (failed unlocks of a
 * share link, the public rate limit). Without it the header is ignored: anyone could claim any address.
 */

describe('TRUST_PROXY in the environment', () => {
  const trustOf = (value?: string) => loadConfig({ DATA_DIR: '/tmp', TRUST_PROXY: value }).trustProxy;

  it('is off by default; true trusts every peer; a list names proxy addresses, networks or ranges', () => {
    expect(trustOf()).toBe(false);
    expect(trustOf('')).toBe(false);
    expect(trustOf('false')).toBe(false);
    expect(trustOf('true')).toBe(true);
    expect(trustOf('127.0.0.1')).toEqual(['127.0.0.1']);
    expect(trustOf(' 10.0.0.0/8 , ::1,fd00::/8, loopback ')).toEqual(['10.0.0.0/8', '::1', 'fd00::/8', 'loopback']);
  });

  it('refuses a hop count (fastify ignores it: it cannot check the peer) and what is no address', () => {
    for (const bad of ['1', '2', '10.0.0.300', '10.0.0.0/33', '10.0.0.0/0', 'proxy.local', '10.0.0.1,,', 'TRUE']) {
      expect(() => trustOf(bad), bad).toThrow(/TRUST_PROXY/);
    }
  });
});

/** A password link of a dashboard without widgets: enough to count failed unlocks. */
async function passwordLink(t: TestApp, api: Rest): Promise<string> {
  const cast = await createRoleCast(t.deps, api);
  const dashboard = await postDashboard(api, cast.tokens.editor, cast.workspaceId);
  const link = ok<{ token: string }>(
    await api.post(
      `/api/dashboard/${dashboard.id}/share-links`,
      { name: 'за прокси', password: 'правильный-1' },
      cast.tokens.editor,
    ),
  );
  return link.token;
}

/** Failed unlocks through a proxy on 127.0.0.1 (the address inject speaks from) for a viewer at `forwardedFor`. */
function unlockVia(t: TestApp, token: () => string) {
  return async (forwardedFor: string, password = 'неверный'): Promise<number> => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/public/link/${token()}/unlock`,
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': forwardedFor },
      payload: { password },
    });
    return res.statusCode;
  };
}

describe('with TRUST_PROXY=127.0.0.1', () => {
  // A public budget above the 6 unlock calls of one viewer below.
  const PUBLIC_BUDGET = 8;
  const { t, api } = useTestApp({ TRUST_PROXY: '127.0.0.1', PUBLIC_RATE_LIMIT_PER_MINUTE: String(PUBLIC_BUDGET) });
  let token = '';
  beforeAll(async () => {
    token = await passwordLink(t, api);
  });
  const unlock = unlockVia(t, () => token);

  it('two viewers behind the proxy have separate unlock budgets', async () => {
    const first = '203.0.113.1';
    for (let i = 0; i < 5; i++) expect(await unlock(first)).toBe(401);
    expect(await unlock(first, 'правильный-1')).toBe(429);
    // Another viewer through the same proxy is not locked out by the first one's failures.
    expect(await unlock('203.0.113.2', 'правильный-1')).toBe(200);
  });

  /** A public GET from `peer`, naming `forwardedFor` in X-Forwarded-For. */
  const stateFrom = async (peer: string, forwardedFor: string) =>
    (
      await t.app.inject({
        method: 'GET',
        url: `/api/public/link/${'E'.repeat(43)}`,
        remoteAddress: peer,
        headers: { 'x-forwarded-for': forwardedFor },
      })
    ).statusCode;

  it('the public rate limit counts per forwarded address', async () => {
    for (let i = 0; i < PUBLIC_BUDGET; i++) expect(await stateFrom('127.0.0.1', '198.51.100.1')).toBe(404);
    expect(await stateFrom('127.0.0.1', '198.51.100.1')).toBe(429);
    expect(await stateFrom('127.0.0.1', '198.51.100.2')).toBe(404);
  });

  it('a peer that is not the proxy cannot claim an address: it is counted as itself', async () => {
    for (let i = 0; i < PUBLIC_BUDGET; i++) expect(await stateFrom('192.0.2.50', `198.51.100.${i + 10}`)).toBe(404);
    expect(await stateFrom('192.0.2.50', '198.51.100.20')).toBe(429);
  });
});

describe('without TRUST_PROXY', () => {
  const { t, api } = useTestApp();
  let token = '';
  beforeAll(async () => {
    token = await passwordLink(t, api);
  });
  const unlock = unlockVia(t, () => token);

  it('X-Forwarded-For is ignored: every viewer behind the proxy shares its budget', async () => {
    for (let i = 0; i < 5; i++) expect(await unlock(`203.0.113.${i + 1}`)).toBe(401);
    expect(await unlock('203.0.113.99', 'правильный-1')).toBe(429);
  });
});
