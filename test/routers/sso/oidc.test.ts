import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupMembers } from '../../../db/schema/groups';
import { ssoLoginCodes, ssoLoginStates } from '../../../db/schema/sso';
import { users } from '../../../db/schema/users';
import type { loginOutput } from '../../../routers/auth/schemas';
import type { loginProvidersOutput, providerView } from '../../../routers/sso/schemas';
import { personalWorkspaceId } from '../../../server/workspaces/store';
import { SSO_MESSAGES } from '../../../server/sso/messages';
import { useTestApp } from '../../support/app';
import { TEST_ADMIN } from '../../support/constants';
import { createGroup, createUser, loginAdmin, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { idpLogin, startTestIdp, type TestIdp } from './oidc-idp';
import { BINDING_COOKIE, ssoBrowser, type Browser } from './sso-browser';

/*
 * The whole OIDC login against a real OpenID Connect provider (oidc-provider on loopback), over real HTTP: the
 * platform listens on a random port, the browser is fetch with manual redirects.
 */

type LoginResult = z.output<typeof loginOutput>;
type Provider = z.output<typeof providerView>;

const { t, api } = useTestApp();
let idp: TestIdp;
let base: string;
let admin: string;
const providers: Record<'auto' | 'manual' | 'disabled' | 'doomed', Provider> = {} as never;
const groupIds = { default: 0, analysts: 0, leads: 0, unmapped: 0 };

/** The browser the tests log in with, unless a test names another. */
const { browser, http, authorize, followCallback, exchange } = ssoBrowser(() => base);

/** The browser up to the platform's callback URL (not yet followed). */
async function throughIdp(providerId: number, accountId: string, redirectUri?: string, jar = browser) {
  const callback = await idpLogin(idp, await authorize(providerId, redirectUri, jar), accountId);
  expect(callback.startsWith(`${base}api/auth/sso/${providerId}/callback?`)).toBe(true);
  return callback;
}

/** A whole login: answers the one-time code the platform redirected to. */
async function ssoCode(providerId: number, accountId: string, redirectUri?: string): Promise<string> {
  const res = await followCallback(await throughIdp(providerId, accountId, redirectUri));
  if (res.status !== 302) throw new Error(`callback: ${res.status} ${JSON.stringify(res.body)}`);
  const code = new URL(res.location!).searchParams.get('code');
  if (!code) throw new Error(`no code in ${res.location}`);
  return code;
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

function account(username: string, groups: string[] = []) {
  const sub = uniq('sub');
  idp.accounts.set(sub, { sub, preferred_username: username, email: `${username}@example.test`, name: 'Test', groups });
  return sub;
}

async function userRow(username: string) {
  const [row] = await t.deps.db
    .select()
    .from(users)
    .where(sql`lower(${users.username}) = lower(${username})`);
  return row;
}

async function groupsOf(userId: number) {
  const rows = await t.deps.db
    .select({ id: groupMembers.groupId })
    .from(groupMembers)
    .where(eq(groupMembers.userId, userId));
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/`;
  admin = await loginAdmin(api);
  ok(await api.put('/api/settings', { base_url: base }, admin));
  for (const key of Object.keys(groupIds) as (keyof typeof groupIds)[]) groupIds[key] = (await createGroup(t.deps)).id;

  idp = await startTestIdp(async (issuer) => {
    const create = async (name: string, extra: Record<string, unknown>) =>
      ok<Provider>(
        await api.post(
          '/api/sso-providers',
          {
            name: uniq(name),
            kind: 'oidc',
            settings: {
              issuer_url: issuer,
              client_id: 'analytics-platform',
              client_secret: 'test-client-secret-0123456789',
              scopes: ['openid', 'profile', 'email', 'groups'],
            },
            ...extra,
          },
          admin,
        ),
      );
    providers.auto = await create('oidc-auto', { auto_create_users: true, default_group_ids: [groupIds.default] });
    providers.manual = await create('oidc-manual', { auto_create_users: false });
    providers.disabled = await create('oidc-off', { enabled: false, auto_create_users: true });
    providers.doomed = await create('oidc-doomed', { auto_create_users: true });
    return Object.values(providers).map((p) => p.callback_url!);
  });
  ok(
    await api.put(
      `/api/sso-providers/${providers.auto.id}/group-mappings`,
      {
        mappings: [
          { idp_group: 'analysts', group_id: groupIds.analysts },
          { idp_group: 'leads', group_id: groupIds.leads },
        ],
      },
      admin,
    ),
  );
}, 60_000);

afterAll(async () => {
  await idp?.close();
});

describe('OIDC login end to end', () => {
  it('the provider test reads the real discovery document', async () => {
    const res = ok<{ ok: boolean; message: string }>(
      await api.post(`/api/sso-providers/${providers.auto.id}/test`, undefined, admin),
    );
    expect(res).toEqual({ ok: true, message: SSO_MESSAGES.testOk });
  });

  it('lists the enabled providers for the login page without a token', async () => {
    const res = await http('GET', 'api/auth/sso/providers');
    expect(res.status).toBe(200);
    const list = res.body.data as z.output<typeof loginProvidersOutput>;
    expect(list).toContainEqual({
      id: providers.auto.id,
      name: providers.auto.name,
      kind: 'oidc',
      authorize_url: `${base}api/auth/sso/${providers.auto.id}/authorize`,
    });
    expect(list.map((p) => p.id)).not.toContain(providers.disabled.id);
  });

  it('authorize -> IdP login -> callback -> exchange gives the login result; a new account is created', async () => {
    const username = uniq('alice');
    const sub = account(username, ['analysts']);
    const landing = `${base}app/after-login`;
    const idpUrl = new URL(await authorize(providers.auto.id, landing));
    expect(idpUrl.origin).toBe(idp.issuer);
    expect(idpUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(idpUrl.searchParams.get('state')).toBeTruthy();
    expect(idpUrl.searchParams.get('nonce')).toBeTruthy();
    expect(idpUrl.searchParams.get('redirect_uri')).toBe(providers.auto.callback_url);

    const callback = await idpLogin(idp, idpUrl.toString(), sub);
    const back = await followCallback(callback);
    expect(back.status).toBe(302);
    const target = new URL(back.location!);
    expect(`${target.origin}${target.pathname}`).toBe(landing);
    const code = target.searchParams.get('code')!;

    const res = await exchange(code, landing);
    expect(res.status).toBe(200);
    const session = res.body.data as LoginResult;
    expect(Object.keys(session).sort()).toEqual(['expires_in', 'refresh_token', 'token', 'token_type']);
    expect(session).toMatchObject({ token_type: 'Bearer', expires_in: 900 });

    const me = await http('GET', 'api/users/me', undefined, session.token);
    expect(me.status).toBe(200);
    expect(me.body.data.username).toBe(username);
    const refreshed = await http('POST', 'api/auth/refresh', { refresh_token: session.refresh_token });
    expect(refreshed.status).toBe(200);

    const user = await userRow(username);
    expect(user.accountType).toBe('sso');
    expect(user.passwordHash).toBeNull();
    expect(await personalWorkspaceId(t.deps.db, user.id)).toBeDefined();
    expect(await groupsOf(user.id)).toEqual([groupIds.default, groupIds.analysts].sort((a, b) => a - b));
  });

  it('a one-time code cannot be exchanged twice, nor for another redirect URI', async () => {
    const sub = account(uniq('reuse'));
    const code = await ssoCode(providers.auto.id, sub);
    expect((await exchange(code)).status).toBe(200);
    const again = await exchange(code);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe(SSO_MESSAGES.badCode);

    const other = await ssoCode(providers.auto.id, sub, `${base}one`);
    expect((await exchange(other, `${base}two`)).status).toBe(401);
    // The failed attempt spent it too.
    expect((await exchange(other, `${base}one`)).status).toBe(401);
    expect((await exchange('not-a-code')).status).toBe(401);
  });

  it('two exchanges of one code at once: exactly one gets the session', async () => {
    const code = await ssoCode(providers.auto.id, account(uniq('race')));
    const answers = await Promise.all([exchange(code), exchange(code), exchange(code)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
  });

  it('a code is bound to its redirect URI: a browser of another origin cannot trade it, its own origin can', async () => {
    const sub = account(uniq('bound'));
    const foreign = await ssoCode(providers.auto.id, sub, `${base}landing`);
    const res = await exchange(foreign, undefined, 'https://evil.example');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.badCode);
    // Refused, and spent: the foreign page has seen it.
    expect((await exchange(foreign, undefined, new URL(base).origin)).status).toBe(401);

    const own = await ssoCode(providers.auto.id, sub, `${base}landing`);
    expect((await exchange(own, undefined, new URL(base).origin)).status).toBe(200);
  });

  it('authorize ties the login to the browser with an HttpOnly, SameSite=Lax cookie; one browser keeps one secret', async () => {
    const tab: Browser = {};
    const first = await http(
      'GET',
      `api/auth/sso/${providers.auto.id}/authorize`,
      undefined,
      undefined,
      undefined,
      tab,
    );
    const setCookie = (
      await fetch(new URL(`api/auth/sso/${providers.auto.id}/authorize`, base), { redirect: 'manual' })
    ).headers
      .getSetCookie()
      .find((c) => c.startsWith(`${BINDING_COOKIE}=`))!;
    expect(first.status).toBe(302);
    expect(setCookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Max-Age=600',
      'Path=/api/auth/sso',
      'SameSite=Lax',
    ]);
    // A second login in the same browser (another tab) renews the same secret, so both logins can finish.
    const secret = tab.cookie;
    const sub = account(uniq('tabs'));
    const one = await throughIdp(providers.auto.id, sub, undefined, tab);
    const two = await throughIdp(providers.auto.id, sub, undefined, tab);
    expect(tab.cookie).toBe(secret);
    for (const callback of [two, one]) {
      const code = new URL((await followCallback(callback, tab)).location!).searchParams.get('code')!;
      expect((await exchange(code, undefined, undefined, tab)).status).toBe(200);
    }
  });

  it("login CSRF: an attacker's login finished in a victim's browser is refused there, and the code is spent", async () => {
    const attacker: Browser = {};
    const victim: Browser = {};
    const username = uniq('attacker');
    const callback = await throughIdp(providers.auto.id, account(username), undefined, attacker);
    // The victim opens the attacker's callback link: the callback itself answers (a SAML ACS could not check a
    // SameSite cookie either), but the code it lands with cannot be traded in the victim's browser.
    const landed = await followCallback(callback, victim);
    expect(landed.status).toBe(302);
    const code = new URL(landed.location!).searchParams.get('code')!;
    const res = await exchange(code, undefined, new URL(base).origin, victim);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.otherBrowser);
    expect(res.body.data).toBeUndefined();
    // Spent: not even the attacker's own browser can trade it now.
    expect((await exchange(code, undefined, undefined, attacker)).status).toBe(401);
    // A client that keeps no cookies at all is another browser too; a forged cookie is no better.
    const bare = await ssoCode(providers.auto.id, account(uniq('bare')));
    expect((await exchange(bare, undefined, undefined, {})).body.error.message).toBe(SSO_MESSAGES.otherBrowser);
    const forged = await ssoCode(providers.auto.id, account(uniq('forged')));
    const other = { cookie: `${BINDING_COOKIE}=${'A'.repeat(43)}` };
    expect((await exchange(forged, undefined, undefined, other)).body.error.message).toBe(SSO_MESSAGES.otherBrowser);
  });

  it('a code whose redirect URI is no longer under the base URL (the base URL moved) is refused', async () => {
    const code = await ssoCode(providers.auto.id, account(uniq('moved')), `${base}landing`);
    const moved = base.replace('127.0.0.1', 'localhost');
    ok(await api.put('/api/settings', { base_url: moved }, admin));
    try {
      const res = await exchange(code);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe(SSO_MESSAGES.badCode);
    } finally {
      ok(await api.put('/api/settings', { base_url: base }, admin));
    }
  });

  it('a one-time code is refused after its lifetime', async () => {
    const code = await ssoCode(providers.auto.id, account(uniq('late')));
    await t.deps.db
      .update(ssoLoginCodes)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(ssoLoginCodes.codeHash, sha256(code)));
    const res = await exchange(code);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.badCode);
  });

  it('applies the group mappings at every login: mapped groups added and removed, others kept', async () => {
    const username = uniq('mapped');
    const sub = account(username, ['analysts']);
    expect((await exchange(await ssoCode(providers.auto.id, sub))).status).toBe(200);
    const user = await userRow(username);
    await t.deps.db.insert(groupMembers).values({ userId: user.id, groupId: groupIds.unmapped });

    idp.accounts.get(sub)!.groups = ['leads', 'unknown-idp-group'];
    expect((await exchange(await ssoCode(providers.auto.id, sub))).status).toBe(200);
    expect(await groupsOf(user.id)).toEqual(
      [groupIds.default, groupIds.leads, groupIds.unmapped].sort((a, b) => a - b),
    );

    idp.accounts.get(sub)!.groups = [];
    expect((await exchange(await ssoCode(providers.auto.id, sub))).status).toBe(200);
    expect(await groupsOf(user.id)).toEqual([groupIds.default, groupIds.unmapped].sort((a, b) => a - b));
  });

  it('never logs into a local account of the same name (an IdP user called «admin» is not the administrator)', async () => {
    const local = await createUser(t.deps);
    const res = await followCallback(await throughIdp(providers.auto.id, account(local.username)));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(SSO_MESSAGES.notSsoAccount(local.username));
    const asAdmin = await followCallback(await throughIdp(providers.auto.id, account(TEST_ADMIN.username)));
    expect(asAdmin.status).toBe(403);
  });

  it('matches an existing account by the username claim', async () => {
    const existing = await createUser(t.deps, { accountType: 'sso' });
    const sub = account(existing.username);
    const session = (await exchange(await ssoCode(providers.manual.id, sub))).body.data as LoginResult;
    const me = await http('GET', 'api/users/me', undefined, session.token);
    expect(me.body.data.id).toBe(existing.id);
  });
});

describe('OIDC bad input: a clear refusal, no session, no account', () => {
  it('a tampered state is refused', async () => {
    const username = uniq('state');
    const callback = new URL(await throughIdp(providers.auto.id, account(username)));
    callback.searchParams.set('state', 'forged-state');
    const res = await followCallback(callback.toString());
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.badState);
    expect(res.location).toBeNull();
    expect(await userRow(username)).toBeUndefined();
  });

  it('a callback without state is refused', async () => {
    const callback = new URL(await throughIdp(providers.auto.id, account(uniq('nostate'))));
    callback.searchParams.delete('state');
    expect((await followCallback(callback.toString())).status).toBe(401);
  });

  it('an ID token with another nonce than the login sent is refused', async () => {
    const username = uniq('nonce');
    // The authorization request tampered on its way to the IdP: the IdP signs an ID token with the forged nonce,
    // while the login state keeps the one the platform sent.
    const idpUrl = new URL(await authorize(providers.auto.id));
    expect(idpUrl.searchParams.get('nonce')).toBeTruthy();
    idpUrl.searchParams.set('nonce', 'another-login-nonce');
    const callback = await idpLogin(idp, idpUrl.toString(), account(username));
    const res = await followCallback(callback);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/nonce/);
    expect(res.location).toBeNull();
    expect(await userRow(username)).toBeUndefined();
  });

  it('a login state is refused after its lifetime', async () => {
    const username = uniq('slow');
    const callback = new URL(await throughIdp(providers.auto.id, account(username)));
    await t.deps.db
      .update(ssoLoginStates)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(ssoLoginStates.stateHash, sha256(callback.searchParams.get('state')!)));
    const res = await followCallback(callback.toString());
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.badState);
    expect(await userRow(username)).toBeUndefined();
  });

  it("a state sent to another provider's callback is refused there and does not burn the real login", async () => {
    const username = uniq('crossed');
    const callback = new URL(await throughIdp(providers.auto.id, account(username)));
    const foreign = await followCallback(`${providers.manual.callback_url}${callback.search}`);
    expect(foreign.status).toBe(401);
    expect(foreign.body.error.message).toBe(SSO_MESSAGES.badState);
    const own = await followCallback(callback.toString());
    expect(own.status).toBe(302);
    expect(await userRow(username)).toBeDefined();
  });

  it('a replayed callback (same code and state) is refused', async () => {
    const callback = await throughIdp(providers.auto.id, account(uniq('replay')));
    expect((await followCallback(callback)).status).toBe(302);
    const again = await followCallback(callback);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe(SSO_MESSAGES.badState);
  });

  it('the IdP refusing the login (error=access_denied) is a refusal', async () => {
    const idpUrl = new URL(await authorize(providers.auto.id));
    const res = await followCallback(
      `${providers.auto.callback_url}?error=access_denied&error_description=denied&state=${idpUrl.searchParams.get('state')}`,
    );
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.idpRefused('denied'));
  });

  it('unknown provider id: 404 at authorize and at callback', async () => {
    const res = await http('GET', 'api/auth/sso/2147483000/authorize');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe(SSO_MESSAGES.providerNotFound(2147483000));
    expect((await http('GET', 'api/auth/sso/2147483000/callback?code=x&state=y')).status).toBe(404);
    expect((await http('GET', 'api/auth/sso/abc/authorize')).status).toBe(422);
  });

  it('a disabled provider cannot start a login', async () => {
    const res = await http('GET', `api/auth/sso/${providers.disabled.id}/authorize`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(SSO_MESSAGES.providerDisabled);
  });

  it('a provider disabled mid-login refuses the callback and its codes', async () => {
    const username = uniq('midway');
    const code = await ssoCode(
      providers.manual.id,
      account((await createUser(t.deps, { accountType: 'sso' })).username),
    );
    const callback = await throughIdp(providers.manual.id, account(username));
    ok(await api.put(`/api/sso-providers/${providers.manual.id}`, { enabled: false }, admin));
    try {
      expect((await followCallback(callback)).status).toBe(400);
      expect((await exchange(code)).status).toBe(401);
    } finally {
      ok(await api.put(`/api/sso-providers/${providers.manual.id}`, { enabled: true }, admin));
    }
  });

  it('a callback for a deleted provider is refused and creates no account', async () => {
    const username = uniq('doomed');
    const callback = await throughIdp(providers.doomed.id, account(username));
    ok(await api.delete(`/api/sso-providers/${providers.doomed.id}`, admin));
    const res = await followCallback(callback);
    expect(res.status).toBe(404);
    expect(await userRow(username)).toBeUndefined();
  });

  it('without auto_create_users an unknown user is refused and no account is made', async () => {
    const username = uniq('stranger');
    const res = await followCallback(await throughIdp(providers.manual.id, account(username)));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(SSO_MESSAGES.noAccount(username));
    expect(await userRow(username)).toBeUndefined();
  });

  it('a username POST /api/users would refuse (too long, a space, a NUL) is refused before any account is made', async () => {
    const prefix = uniq('badname');
    for (const username of [`${prefix}_${'x'.repeat(5000)}`, `${prefix} with space`, `${prefix}\u0000nul`]) {
      const res = await followCallback(await throughIdp(providers.auto.id, account(username)));
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.message).toBe(SSO_MESSAGES.badUsername('preferred_username'));
      expect(res.location).toBeNull();
    }
    const made = await t.deps.db
      .select({ id: users.id })
      .from(users)
      .where(sql`starts_with(${users.username}, ${prefix})`);
    expect(made).toEqual([]);
    // The rule's own edges still log in: 100 characters, letters of any script, digits and . _ @ -
    const edge = `${prefix}.Ёж@x-1_`.padEnd(100, 'я');
    expect((await followCallback(await throughIdp(providers.auto.id, account(edge)))).status).toBe(302);
    expect((await userRow(edge)).username).toBe(edge);
  });

  it('a name or address claim POST /api/users would refuse (a NUL, malformed, too long) is left out of the new account', async () => {
    const username = uniq('claims');
    const sub = account(username);
    idp.accounts.set(sub, {
      ...idp.accounts.get(sub)!,
      name: 'Имя\u0000с NUL',
      email: `${'x'.repeat(400)}@example.test`,
    });
    expect((await followCallback(await throughIdp(providers.auto.id, sub))).status).toBe(302);
    expect(await userRow(username)).toMatchObject({ fullName: '', email: null });
    const other = uniq('claims');
    const good = account(other);
    idp.accounts.set(good, { ...idp.accounts.get(good)!, name: 'Анна Петрова', email: 'not an address' });
    expect((await followCallback(await throughIdp(providers.auto.id, good))).status).toBe(302);
    expect(await userRow(other)).toMatchObject({ fullName: 'Анна Петрова', email: null });
  });

  it('a deactivated user cannot log in through SSO', async () => {
    const user = await createUser(t.deps, { accountType: 'sso' });
    await t.deps.db.update(users).set({ active: false }).where(eq(users.id, user.id));
    const res = await followCallback(await throughIdp(providers.auto.id, account(user.username)));
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.accountDisabled);
  });

  it('a code whose user was deactivated after the callback is refused', async () => {
    const user = await createUser(t.deps, { accountType: 'sso' });
    const code = await ssoCode(providers.auto.id, account(user.username));
    await t.deps.db.update(users).set({ active: false }).where(eq(users.id, user.id));
    const res = await exchange(code);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe(SSO_MESSAGES.accountDisabled);
  });

  it('SSO logins share the password login throttle (username and client address)', async () => {
    const user = await createUser(t.deps, { accountType: 'sso' });
    for (let i = 0; i < 5; i++) {
      expect((await http('POST', 'api/auth/login', { username: user.username, password: 'wrong' })).status).toBe(401);
    }
    const res = await followCallback(await throughIdp(providers.auto.id, account(user.username)));
    expect(res.status).toBe(429);
  });

  it('redirect URIs off the installation base URL are refused (no open redirect)', async () => {
    for (const target of ['https://evil.example/', '//evil.example/x', `${base.replace('127.0.0.1', 'localhost')}x`]) {
      const res = await http(
        'GET',
        `api/auth/sso/${providers.auto.id}/authorize?redirectUri=${encodeURIComponent(target)}`,
      );
      expect(res.status, target).toBe(400);
      expect(res.body.error.message).toBe(SSO_MESSAGES.foreignRedirect);
    }
    // A relative path lands under the base URL.
    const idpUrl = await authorize(providers.auto.id, '/dashboards/7');
    expect(idpUrl.startsWith(idp.issuer)).toBe(true);
  });

  it('the exchange validates its body', async () => {
    const res = await api.post('/api/auth/sso/exchange', { code: '' });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toHaveProperty('code');
  });
});
