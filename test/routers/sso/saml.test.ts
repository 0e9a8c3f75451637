import { eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { groupMembers } from '../../../db/schema/groups';
import { ssoProviders } from '../../../db/schema/sso';
import { users } from '../../../db/schema/users';
import type { loginOutput } from '../../../routers/auth/schemas';
import type { providerView } from '../../../routers/sso/schemas';
import { SSO_MESSAGES } from '../../../server/sso/messages';
import { useTestApp } from '../../support/app';
import { createGroup, createUser, login, loginAdmin, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import {
  IDP_CERT,
  OTHER_CERT,
  OTHER_KEY,
  idpMetadataXml,
  readAuthnRequest,
  samlResponse,
  type AssertionOptions,
} from './saml-idp';

/*
 * SAML 2.0 login with assertions signed by a test IdP key (xml-crypto): the valid path end to end, and every way an
 * assertion can be wrong. The platform is driven through fastify.inject; the base URL is a name only.
 */

type Provider = z.output<typeof providerView>;
type LoginResult = z.output<typeof loginOutput>;

const BASE = 'http://sp.test/analytics/';
const { t, api } = useTestApp();
let admin: string;
let provider: Provider;
let strict: Provider;
const groupIds = { default: 0, analysts: 0 };

interface Started {
  requestId: string;
  relayState: string;
  acs: string;
  audience: string;
  /** The browser binding cookie authorize set (name=value), which the exchange must carry. */
  cookie: string;
  /** The whole Set-Cookie header of authorize, attributes included. */
  setCookie: string;
}

async function startLogin(p: Provider = provider, redirectUri?: string): Promise<Started> {
  const query = redirectUri ? `?redirectUri=${encodeURIComponent(redirectUri)}` : '';
  const res = await t.app.inject({ method: 'GET', url: `/api/auth/sso/${p.id}/authorize${query}` });
  if (res.statusCode !== 302) throw new Error(`authorize: ${res.statusCode} ${res.body}`);
  const location = res.headers.location as string;
  expect(location.startsWith('https://idp.test/saml/sso?')).toBe(true);
  const { requestId, relayState, xml } = readAuthnRequest(location);
  expect(xml).toContain(`AssertionConsumerServiceURL="${p.callback_url}"`);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = setCookie.split(';')[0];
  return { requestId, relayState, acs: p.callback_url!, audience: `${BASE}api/auth/sso/${p.id}`, cookie, setCookie };
}

/**
 * The cookie a browser sends to `url` (RFC 6265 path-match): fastify.inject sends whatever it is given, while a real
 * browser under the base URL's path sends the binding cookie only when its Path covers that path.
 */
function cookieSentTo(setCookie: string, url: string): string | undefined {
  const path = /;\s*Path=([^;]*)/i.exec(setCookie)?.[1] ?? '/';
  const requested = new URL(url).pathname;
  const covered =
    requested === path || (requested.startsWith(path) && (path.endsWith('/') || requested[path.length] === '/'));
  return covered ? setCookie.split(';')[0] : undefined;
}

async function post(p: Provider, form: Record<string, string>) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/auth/sso/${p.id}/callback`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, location: res.headers.location as string | undefined, body };
}

function response(started: Started, nameId: string, overrides: Partial<AssertionOptions> = {}) {
  return samlResponse({
    nameId,
    inResponseTo: started.requestId,
    audience: started.audience,
    destination: started.acs,
    attributes: { groups: ['analysts'], email: [`${nameId}@example.test`] },
    ...overrides,
  });
}

const userRow = async (username: string) =>
  (
    await t.deps.db
      .select()
      .from(users)
      .where(sql`lower(${users.username}) = lower(${username})`)
  )[0];

async function expectRefused(res: { status: number; location?: string; body: any }, message: string | RegExp) {
  expect(res.status).toBe(401);
  expect(res.location).toBeUndefined();
  if (typeof message === 'string') expect(res.body.error.message).toBe(message);
  else expect(res.body.error.message).toMatch(message);
}

beforeAll(async () => {
  admin = await loginAdmin(api);
  ok(await api.put('/api/settings', { base_url: BASE }, admin));
  groupIds.default = (await createGroup(t.deps)).id;
  groupIds.analysts = (await createGroup(t.deps)).id;
  const create = async (extra: Record<string, unknown>) =>
    ok<Provider>(
      await api.post(
        '/api/sso-providers',
        { name: uniq('saml'), kind: 'saml', settings: { idp_metadata_xml: idpMetadataXml() }, ...extra },
        admin,
      ),
    );
  provider = await create({ auto_create_users: true, default_group_ids: [groupIds.default] });
  strict = await create({ auto_create_users: false });
  ok(
    await api.put(
      `/api/sso-providers/${provider.id}/group-mappings`,
      { mappings: [{ idp_group: 'analysts', group_id: groupIds.analysts }] },
      admin,
    ),
  );
});

describe('SAML login', () => {
  it('a signed assertion logs in: 302 with a code, exchanged for the login result; the account is created', async () => {
    const username = uniq('saml_user');
    const landing = `${BASE}home`;
    const started = await startLogin(provider, landing);
    const res = await post(provider, { SAMLResponse: response(started, username), RelayState: started.relayState });
    expect(res.status, JSON.stringify(res.body)).toBe(302);
    const target = new URL(res.location!);
    expect(`${target.origin}${target.pathname}`).toBe(landing);
    // The IdP's cross-site POST carries no SameSite=Lax cookie; the landing page's exchange does.
    const code = target.searchParams.get('code');
    const elsewhere = await api.post('/api/auth/sso/exchange', { code });
    expect(elsewhere.status).toBe(401);
    expect(failure(elsewhere).message).toBe(SSO_MESSAGES.otherBrowser);
    const again = await startLogin(provider, landing);
    const second = await post(provider, { SAMLResponse: response(again, username), RelayState: again.relayState });
    const exchanged = await api.call('POST', '/api/auth/sso/exchange', {
      body: { code: new URL(second.location!).searchParams.get('code') },
      headers: { cookie: again.cookie },
    });
    const session = ok<LoginResult>(exchanged);
    expect(session).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    const me = ok<{ username: string }>(await api.get('/api/users/me', session.token));
    expect(me.username).toBe(username);
    const user = await userRow(username);
    expect(user).toMatchObject({ accountType: 'sso', email: `${username}@example.test` });
    const groups = await t.deps.db
      .select({ id: groupMembers.groupId })
      .from(groupMembers)
      .where(eq(groupMembers.userId, user.id));
    expect(groups.map((g) => g.id).sort((a, b) => a - b)).toEqual(
      [groupIds.default, groupIds.analysts].sort((a, b) => a - b),
    );
  });

  it('the binding cookie lives under the base URL path, so a browser sends it to the exchange there', async () => {
    const username = uniq('saml_path');
    const started = await startLogin(provider);
    expect(started.setCookie).toMatch(/; Path=\/analytics\/api\/auth\/sso(;|$)/);
    const res = await post(provider, { SAMLResponse: response(started, username), RelayState: started.relayState });
    expect(res.status, JSON.stringify(res.body)).toBe(302);
    // The browser asks for the exchange under the base URL; the proxy in front hands the app /api/auth/sso/exchange.
    const cookie = cookieSentTo(started.setCookie, `${BASE}api/auth/sso/exchange`);
    expect(cookie).toBe(started.cookie);
    const exchanged = await api.call('POST', '/api/auth/sso/exchange', {
      body: { code: new URL(res.location!).searchParams.get('code') },
      headers: { cookie: cookie! },
    });
    expect(ok<LoginResult>(exchanged).token_type).toBe('Bearer');
  });

  it('parallel first logins of one new user (double click, two tabs) all succeed with one account', async () => {
    const username = uniq('saml_twice');
    const logins = [];
    for (let i = 0; i < 4; i++) logins.push(await startLogin(provider));
    const answers = await Promise.all(
      logins.map((started) =>
        post(provider, { SAMLResponse: response(started, username), RelayState: started.relayState }),
      ),
    );
    expect(answers.map((a) => [a.status, a.body?.error?.message])).toEqual(logins.map(() => [302, undefined]));
    const accounts = await t.deps.db
      .select({ id: users.id })
      .from(users)
      .where(sql`lower(${users.username}) = lower(${username})`);
    expect(accounts).toHaveLength(1);
  });

  it('serves the SP metadata with entity id, ACS URL and the signing certificate (administrators only)', async () => {
    const res = await api.get(`/api/sso-providers/${provider.id}/sp-metadata`, admin);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/xml/);
    const xml = res.body as string;
    expect(xml).toContain(`entityID="${BASE}api/auth/sso/${provider.id}"`);
    expect(xml).toContain(`Location="${provider.callback_url}"`);
    const [row] = await t.deps.db.select().from(ssoProviders).where(eq(ssoProviders.id, provider.id));
    const cert = (row.settings as { sp_certificate: string }).sp_certificate;
    const body = cert.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
    expect(xml.replace(/\s+/g, '')).toContain(body);
    expect(xml).toMatch(/KeyDescriptor[^>]*use="signing"/);

    const user = await createUser(t.deps);
    expect(
      (await api.get(`/api/sso-providers/${provider.id}/sp-metadata`, await login(api, user.username, user.password)))
        .status,
    ).toBe(403);
    expect((await api.get(`/api/sso-providers/${provider.id}/sp-metadata`)).status).toBe(401);
    expect((await api.get('/api/sso-providers/2147483000/sp-metadata', admin)).status).toBe(404);
  });

  it('the AuthnRequest is signed with the SP key', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/auth/sso/${provider.id}/authorize` });
    const url = new URL(res.headers.location as string);
    expect(url.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(url.searchParams.get('Signature')).toBeTruthy();
  });
});

describe('SAML bad input: refused, no session, no account', () => {
  it('a tampered assertion (name changed after signing)', async () => {
    const username = uniq('tampered');
    const started = await startLogin();
    const xml = Buffer.from(response(started, 'someone_else'), 'base64').toString('utf8');
    const forged = Buffer.from(xml.replace('someone_else', username)).toString('base64');
    await expectRefused(await post(provider, { SAMLResponse: forged, RelayState: started.relayState }), /signature/i);
    expect(await userRow(username)).toBeUndefined();
  });

  it('an unsigned assertion', async () => {
    const username = uniq('unsigned');
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, username, { signWith: null }),
      RelayState: started.relayState,
    });
    await expectRefused(res, /signature/i);
    expect(await userRow(username)).toBeUndefined();
  });

  it('an assertion signed by another key', async () => {
    const username = uniq('otherkey');
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, username, { signWith: { key: OTHER_KEY, cert: OTHER_CERT } }),
      RelayState: started.relayState,
    });
    await expectRefused(res, /signature/i);
    expect(await userRow(username)).toBeUndefined();
  });

  it('an expired assertion', async () => {
    const username = uniq('expired');
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, username, { notBefore: -3600, notOnOrAfter: -600 }),
      RelayState: started.relayState,
    });
    // node-saml checks the subject confirmation's window first, then the conditions': either refuses it.
    await expectRefused(res, /expired|subject confirmation/i);
    expect(await userRow(username)).toBeUndefined();
  });

  it('an assertion for another audience', async () => {
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, uniq('aud'), { audience: 'https://other-sp.test/' }),
      RelayState: started.relayState,
    });
    await expectRefused(res, /audience/i);
  });

  it('a response addressed to another destination', async () => {
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, uniq('dest'), { destination: 'https://other-sp.test/acs' }),
      RelayState: started.relayState,
    });
    await expectRefused(res, /Destination/);
  });

  it('a response to another AuthnRequest', async () => {
    const started = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(started, uniq('irt'), { inResponseTo: '_not_our_request' }),
      RelayState: started.relayState,
    });
    await expectRefused(res, /InResponseTo/);
  });

  it('a replayed POST (same response and RelayState)', async () => {
    const started = await startLogin();
    const form = { SAMLResponse: response(started, uniq('replay')), RelayState: started.relayState };
    expect((await post(provider, form)).status).toBe(302);
    await expectRefused(await post(provider, form), SSO_MESSAGES.badState);
  });

  it('an assertion id accepted once is refused in a later response', async () => {
    const username = uniq('sameid');
    const assertionId = `_a${uniq('id')}`;
    const first = await startLogin();
    const ok1 = await post(provider, {
      SAMLResponse: response(first, username, { assertionId }),
      RelayState: first.relayState,
    });
    expect(ok1.status).toBe(302);
    const second = await startLogin();
    const res = await post(provider, {
      SAMLResponse: response(second, username, { assertionId }),
      RelayState: second.relayState,
    });
    await expectRefused(res, SSO_MESSAGES.replayedAssertion);
  });

  it('no RelayState, an unknown one, or no SAMLResponse', async () => {
    const started = await startLogin();
    await expectRefused(await post(provider, { SAMLResponse: response(started, uniq('x')) }), SSO_MESSAGES.badState);
    await expectRefused(
      await post(provider, { SAMLResponse: response(started, uniq('x')), RelayState: 'forged' }),
      SSO_MESSAGES.badState,
    );
    await expectRefused(await post(provider, { RelayState: started.relayState }), /SAMLResponse/);
  });

  it('a RelayState of another provider is refused there and does not burn the real login', async () => {
    const started = await startLogin(provider);
    const username = uniq('x');
    const res = await post(strict, { SAMLResponse: response(started, username), RelayState: started.relayState });
    await expectRefused(res, SSO_MESSAGES.badState);
    const own = await post(provider, { SAMLResponse: response(started, username), RelayState: started.relayState });
    expect(own.status, JSON.stringify(own.body)).toBe(302);
  });

  it('an unknown user without auto_create_users', async () => {
    const username = uniq('nobody');
    const started = await startLogin(strict);
    const res = await post(strict, {
      SAMLResponse: response(started, username, { audience: started.audience }),
      RelayState: started.relayState,
    });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(SSO_MESSAGES.noAccount(username));
    expect(await userRow(username)).toBeUndefined();
  });

  it('an ACS call for a deleted provider', async () => {
    const doomed = ok<Provider>(
      await api.post(
        '/api/sso-providers',
        {
          name: uniq('doomed'),
          kind: 'saml',
          settings: { idp_metadata_xml: idpMetadataXml() },
          auto_create_users: true,
        },
        admin,
      ),
    );
    const username = uniq('late');
    const started = await startLogin(doomed);
    ok(await api.delete(`/api/sso-providers/${doomed.id}`, admin));
    const res = await post(doomed, { SAMLResponse: response(started, username), RelayState: started.relayState });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe(SSO_MESSAGES.providerNotFound(doomed.id));
    expect(await userRow(username)).toBeUndefined();
  });

  it('a provider whose metadata names another certificate refuses our IdP key', async () => {
    ok(
      await api.put(
        `/api/sso-providers/${strict.id}`,
        { settings: { idp_metadata_xml: idpMetadataXml(OTHER_CERT) } },
        admin,
      ),
    );
    try {
      const user = await createUser(t.deps, { accountType: 'sso' });
      const started = await startLogin(strict);
      await expectRefused(
        await post(strict, { SAMLResponse: response(started, user.username), RelayState: started.relayState }),
        /signature/i,
      );
    } finally {
      ok(
        await api.put(
          `/api/sso-providers/${strict.id}`,
          { settings: { idp_metadata_xml: idpMetadataXml(IDP_CERT) } },
          admin,
        ),
      );
    }
  });

  it('the OIDC callback of a SAML provider is refused', async () => {
    const started = await startLogin();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/auth/sso/${provider.id}/callback?code=x&state=${encodeURIComponent(started.relayState)}`,
    });
    expect(res.statusCode).toBe(400);
  });

  it('a body that is not a form is refused', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/auth/sso/${provider.id}/callback`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ SAMLResponse: 'x' }),
    });
    expect(res.statusCode).toBe(401);
    expect(failure({ status: res.statusCode, body: res.json(), headers: {} }).message).toBe(SSO_MESSAGES.badState);
  });
});
