import type { AddressInfo } from 'node:net';
import { count, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoLoginCodes } from '../../../db/schema/sso';
import { users } from '../../../db/schema/users';
import type { loginOutput } from '../../../routers/auth/schemas';
import type { providerView } from '../../../routers/sso/schemas';
import { SSO_MESSAGES } from '../../../server/sso/messages';
import { useTestApp } from '../../support/app';
import { loginAdmin, uniq } from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import { idpRedirect, signingKey, startForgingIdp, type ForgingIdp } from './forging-idp';
import { ssoBrowser, type Answer } from './sso-browser';

/*
 * The signature of the ID token (and of a signed userinfo answer) against the provider's jwks_uri: a provider on
 * loopback (forging-idp.ts) hands the platform tokens signed as each test chooses, through the whole login over real
 * HTTP. Each provider here is new, so each test starts with the platform holding none of its keys.
 */

type Provider = z.output<typeof providerView>;
type LoginResult = z.output<typeof loginOutput>;

const { t, api } = useTestApp();
let base: string;
let admin: string;
const { http, authorize, followCallback, exchange } = ssoBrowser(() => base);
const idps: ForgingIdp[] = [];

const ID_TOKEN = 'ID-токена';
const USERINFO = 'ответа userinfo';

beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/`;
  admin = await loginAdmin(api);
  ok(await api.put('/api/settings', { base_url: base }, admin));
});

afterAll(async () => {
  await Promise.all(idps.map((idp) => idp.close()));
});

/** A forging IdP and a platform provider for it (new users made at login). Set what the document says before use. */
async function providerFor(opts: { clientSecret?: string } = {}) {
  const idp = await startForgingIdp(opts);
  idps.push(idp);
  const provider = ok<Provider>(
    await api.post(
      '/api/sso-providers',
      {
        name: uniq('forging'),
        kind: 'oidc',
        settings: {
          issuer_url: idp.issuer,
          client_id: idp.clientId,
          ...(idp.clientSecret ? { client_secret: idp.clientSecret } : {}),
          scopes: ['openid', 'profile', 'email'],
        },
        auto_create_users: true,
      },
      admin,
    ),
  );
  return { idp, provider };
}

const asRest = (res: Answer): RestResponse => ({ status: res.status, body: res.body, headers: {} });

/** authorize -> the IdP -> the callback, for a new user: the platform's answer to the callback. */
async function attempt(idp: ForgingIdp, provider: Provider) {
  const username = uniq('forged');
  idp.user = { sub: uniq('sub'), preferred_username: username, email: `${username}@example.test` };
  const callback = await idpRedirect(await authorize(provider.id));
  expect(callback.startsWith(`${provider.callback_url}?`)).toBe(true);
  return { res: await followCallback(callback), username };
}

const codesOf = async (providerId: number) =>
  (await t.deps.db.select({ n: count() }).from(ssoLoginCodes).where(eq(ssoLoginCodes.providerId, providerId)))[0].n;

const userRow = async (username: string) =>
  (
    await t.deps.db
      .select()
      .from(users)
      .where(sql`lower(${users.username}) = lower(${username})`)
  )[0];

/** A whole login succeeds: the code is traded at the exchange for a session of the new user. */
async function expectLogin(idp: ForgingIdp, provider: Provider) {
  const { res, username } = await attempt(idp, provider);
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  const code = new URL(res.location!).searchParams.get('code')!;
  const session = ok<LoginResult>(asRest(await exchange(code)));
  const me = await http('GET', 'api/users/me', undefined, session.token);
  expect(me.body.data.username).toBe(username);
}

/** The callback is a 401 with `reason` (idpAnswerInvalid), no redirect, no one-time code and no account. */
async function expectRefused(idp: ForgingIdp, provider: Provider, reason: string | RegExp) {
  const codes = await codesOf(provider.id);
  const { res, username } = await attempt(idp, provider);
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.location).toBeNull();
  const { message } = failure(asRest(res));
  if (typeof reason === 'string') expect(message).toBe(SSO_MESSAGES.idpAnswerInvalid(reason));
  else {
    expect(message.startsWith(SSO_MESSAGES.idpAnswerInvalid(''))).toBe(true);
    expect(message).toMatch(reason);
  }
  expect(await codesOf(provider.id)).toBe(codes);
  expect(await userRow(username)).toBeUndefined();
}

describe('OIDC: the ID token is signed by a key of the provider’s jwks_uri', () => {
  it('a token signed by the published key logs in; the key set is fetched once and kept', async () => {
    const { idp, provider } = await providerFor();
    await expectLogin(idp, provider);
    await expectLogin(idp, provider);
    expect(idp.jwksFetches).toBe(1);
  });

  it('an RS256 token signed with another key under the published kid is refused (after one fetch again)', async () => {
    const { idp, provider } = await providerFor();
    await expectLogin(idp, provider);
    const [published] = idp.published;
    idp.idToken = { key: await signingKey('RS256'), kid: published.kid };
    await expectRefused(idp, provider, SSO_MESSAGES.signatureMismatch(ID_TOKEN, published.kid));
    // The set was fetched again once, in case the provider had put a new key under that kid; it had not.
    expect(idp.jwksFetches).toBe(2);
    idp.idToken = { key: published };
    await expectLogin(idp, provider);
    expect(idp.jwksFetches).toBe(2);
  });

  it('a token under an unknown kid fetches the key set again exactly once, then is refused', async () => {
    const { idp, provider } = await providerFor();
    await expectLogin(idp, provider);
    const fetched = idp.jwksFetches;
    const stranger = await signingKey('RS256');
    idp.idToken = { key: stranger };
    await expectRefused(idp, provider, SSO_MESSAGES.unknownSigningKey(ID_TOKEN, stranger.kid));
    expect([fetched, idp.jwksFetches]).toEqual([1, 2]);

    // A set fetched for this very token is not fetched twice.
    const cold = await providerFor();
    cold.idp.idToken = { key: stranger };
    await expectRefused(cold.idp, cold.provider, SSO_MESSAGES.unknownSigningKey(ID_TOKEN, stranger.kid));
    expect(cold.idp.jwksFetches).toBe(1);
  });

  it('an algorithm the document does not advertise is refused: PS256, ES256, HS256 with the client secret, none', async () => {
    const { idp, provider } = await providerFor();
    expect(idp.algorithms).toEqual(['RS256']);
    // Keys the JWKS publishes, so that nothing but the algorithm rule stands in the way.
    const ps = await signingKey('PS256');
    const es = await signingKey('ES256');
    idp.published.push(ps, es);
    for (const signer of [
      { key: ps },
      { key: es },
      { secret: idp.clientSecret!, alg: 'HS256' as const },
      'none' as const,
    ]) {
      idp.idToken = signer;
      // openid-client's header check against id_token_signing_alg_values_supported answers first.
      await expectRefused(idp, provider, /unexpected JWT "alg" header parameter/);
    }
  });

  it('a document advertising none and HS256 gets no unsigned token, and HS256 only signed with the client secret', async () => {
    const { idp, provider } = await providerFor();
    idp.algorithms = ['RS256', 'HS256', 'none'];
    idp.idToken = 'none';
    await expectRefused(idp, provider, SSO_MESSAGES.unsignedAnswer(ID_TOKEN));
    idp.idToken = { secret: 'not-the-client-secret-0123456789', alg: 'HS256' };
    await expectRefused(idp, provider, SSO_MESSAGES.secretMismatch(ID_TOKEN));
    idp.idToken = { secret: idp.clientSecret!, alg: 'HS256' };
    await expectLogin(idp, provider);
  });

  it('a public client (no secret) takes no HS256 token even when the document advertises it', async () => {
    const { idp, provider } = await providerFor({ clientSecret: undefined });
    idp.algorithms = ['RS256', 'HS256'];
    idp.idToken = { secret: 'anything-0123456789', alg: 'HS256' };
    await expectRefused(
      idp,
      provider,
      SSO_MESSAGES.algNotAllowed(ID_TOKEN, 'HS256', 'id_token_signing_alg_values_supported', ['RS256']),
    );
    idp.idToken = { key: idp.published[0] };
    await expectLogin(idp, provider);
  });

  it('key rotation: a key the provider starts to sign with is fetched at the first login that needs it', async () => {
    const { idp, provider } = await providerFor();
    await expectLogin(idp, provider);
    // A new key under a new kid, the old one withdrawn: the next login fetches the set again, once.
    const next = await signingKey('RS256');
    idp.published = [next];
    idp.idToken = { key: next };
    await expectLogin(idp, provider);
    expect(idp.jwksFetches).toBe(2);
    await expectLogin(idp, provider);
    expect(idp.jwksFetches).toBe(2);
    // A new key under the same kid.
    const renewed = await signingKey('RS256', next.kid);
    idp.published = [renewed];
    idp.idToken = { key: renewed };
    await expectLogin(idp, provider);
    expect(idp.jwksFetches).toBe(3);
  });

  it('a key set the provider cannot serve is a 503 naming jwks_uri, and no login', async () => {
    const { idp, provider } = await providerFor();
    idp.jwksStatus = 500;
    const { res, username } = await attempt(idp, provider);
    expect(res.status).toBe(503);
    expect(failure(asRest(res)).message).toBe(SSO_MESSAGES.idpUnreachable('jwks_uri ответил 500'));
    expect(await userRow(username)).toBeUndefined();
  });
});

describe('OIDC: a signed userinfo answer is signed by a key of the provider', () => {
  it('signed by the published key its claims are used; signed by another key under that kid it is refused', async () => {
    const { idp, provider } = await providerFor();
    const [published] = idp.published;
    idp.userinfo = { key: published };
    // The username comes from userinfo alone.
    idp.userinfoOnly = ['preferred_username'];
    await expectLogin(idp, provider);
    idp.userinfo = { key: await signingKey('RS256'), kid: published.kid };
    await expectRefused(idp, provider, SSO_MESSAGES.signatureMismatch(USERINFO, published.kid));
  });
});
