import { AsyncLocalStorage } from 'node:async_hooks';
import type * as Client from 'openid-client';
import { AppError, unauthorized } from '../kernel/errors';
import { isLoopback } from './idp-address';
import { SSO_MESSAGES } from './messages';
import { allowedAlgorithms, checkSignature, ProviderKeys } from './oidc-signatures';
import type { OidcSettings, ProviderSecrets } from './provider-settings';
import type { SsoProviderRow } from './store';

/*
 * OpenID Connect with openid-client: discovery, authorization code with PKCE (S256), state and nonce, the ID token's
 * claims, then the userinfo claims. The signatures of the ID token and of a signed userinfo answer are checked here
 * against the provider's jwks_uri (oidc-signatures.ts): openid-client does not check them by default. Plain http is
 * allowed only for an issuer on the loopback interface (idp-address.ts).
 */

// Loaded at the first OIDC call: an installation without OIDC providers never needs it (idle footprint).
let openidClient: Promise<typeof Client> | undefined;
const openid = () => (openidClient ??= import('openid-client'));

const DISCOVERY_TTL_MS = 5 * 60_000;
/** Per provider version: its configuration and its key set (fetched again on a key it lacks, discovery or not). */
const discovered = new Map<string, { config: Client.Configuration; keys: ProviderKeys; at: number }>();

/*
 * openid-client answers the userinfo claims, not the answer they came in: a login that needs the answer's text (to
 * check a signed one) runs its userinfo request inside `answers`, and the configuration's fetch hands it a copy.
 */
const answers = new AsyncLocalStorage<(res: Response) => void>();
const copyingFetch: Client.CustomFetch = async (url, options) => {
  const res = await fetch(url, options as RequestInit);
  answers.getStore()?.(res.clone());
  return res;
};

async function discover(settings: OidcSettings, secrets: ProviderSecrets): Promise<Client.Configuration> {
  const client = await openid();
  const issuer = new URL(settings.issuer_url);
  const execute = issuer.protocol === 'http:' && isLoopback(issuer) ? [client.allowInsecureRequests] : [];
  const config = await client.discovery(
    issuer,
    settings.client_id,
    secrets.client_secret,
    secrets.client_secret ? client.ClientSecretBasic(secrets.client_secret) : client.None(),
    { execute, timeout: 10 },
  );
  config[client.customFetch] = copyingFetch;
  return config;
}

const unreachable = (e: unknown) =>
  new AppError('service_unavailable', SSO_MESSAGES.idpUnreachable(e instanceof Error ? e.message : String(e)), {
    cause: e,
  });

/**
 * The provider's client configuration and keys, discovered once per provider version and reused for a few minutes.
 * The key set has its own life inside (ProviderKeys): a key the provider starts to use is fetched at the first login
 * that needs it, not when this entry expires.
 */
async function discoveredOf(row: SsoProviderRow, settings: OidcSettings, secrets: ProviderSecrets) {
  const key = `${row.id}:${row.updatedAt.getTime()}`;
  const hit = discovered.get(key);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit;
  let config: Client.Configuration;
  try {
    config = await discover(settings, secrets);
  } catch (e) {
    throw unreachable(e);
  }
  for (const k of discovered.keys()) if (k.startsWith(`${row.id}:`)) discovered.delete(k);
  const entry = { config, keys: new ProviderKeys(config.serverMetadata().jwks_uri), at: Date.now() };
  discovered.set(key, entry);
  return entry;
}

/** POST /api/sso-providers/{id}/test: the discovery document answers and names what a login needs. */
export async function testOidcProvider(settings: OidcSettings, secrets: ProviderSecrets): Promise<string | null> {
  try {
    const meta = (await discover(settings, secrets)).serverMetadata();
    if (!meta.authorization_endpoint) return 'в документе обнаружения нет authorization_endpoint';
    if (!meta.token_endpoint) return 'в документе обнаружения нет token_endpoint';
    if (!meta.jwks_uri) return 'в документе обнаружения нет jwks_uri';
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** openid-client's message with the check underneath it (which claim: nonce, iss, aud ...) when it wraps one. */
function describeFailure(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message;
}

export interface OidcLoginStart {
  url: string;
  nonce: string;
  codeVerifier: string;
}

export async function oidcAuthorizeUrl(
  row: SsoProviderRow,
  settings: OidcSettings,
  secrets: ProviderSecrets,
  redirectUri: string,
  state: string,
): Promise<OidcLoginStart> {
  const client = await openid();
  const { config } = await discoveredOf(row, settings, secrets);
  const codeVerifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: settings.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.toString(), nonce, codeVerifier };
}

/** The userinfo claims; a signed (application/jwt) answer's signature checked as the ID token's. */
async function userinfoClaims(
  config: Client.Configuration,
  keys: ProviderKeys,
  secrets: ProviderSecrets,
  accessToken: string,
  sub: string,
): Promise<Record<string, unknown>> {
  const client = await openid();
  let answer: Response | undefined;
  let claims: Record<string, unknown>;
  try {
    claims = await answers.run(
      (res) => (answer = res),
      () => client.fetchUserInfo(config, accessToken, sub),
    );
  } catch (e) {
    if (e instanceof TypeError && !(e instanceof client.ClientError)) throw unreachable(e);
    throw unauthorized(SSO_MESSAGES.idpAnswerInvalid(describeFailure(e)));
  }
  if (!answer) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('ответ userinfo не получен'));
  // The test openid-client made to read the answer as a JWT, so that no answer it read as one goes unchecked.
  if (answer.headers.get('content-type')?.split(';')[0] !== 'application/jwt') {
    await answer.body?.cancel();
    return claims;
  }
  await checkSignature(keys, await answer.text(), {
    of: 'ответа userinfo',
    field: 'userinfo_signing_alg_values_supported',
    algorithms: allowedAlgorithms(
      config.serverMetadata().userinfo_signing_alg_values_supported,
      undefined,
      secrets.client_secret,
    ),
    clientSecret: secrets.client_secret,
  });
  return claims;
}

/**
 * The callback: the code traded with the PKCE verifier, state and nonce checked, the ID token verified (claims and
 * signature), a signed userinfo answer's signature too; answers the ID token claims merged over the userinfo claims.
 * Any failed check is a 401 naming it.
 */
export async function oidcCallbackClaims(
  row: SsoProviderRow,
  settings: OidcSettings,
  secrets: ProviderSecrets,
  currentUrl: URL,
  checks: { state: string; nonce: string; codeVerifier: string },
): Promise<Record<string, unknown>> {
  const error = currentUrl.searchParams.get('error');
  if (error) {
    throw unauthorized(SSO_MESSAGES.idpRefused(currentUrl.searchParams.get('error_description') || error));
  }
  const client = await openid();
  const { config, keys } = await discoveredOf(row, settings, secrets);
  const meta = config.serverMetadata();
  let tokens: Awaited<ReturnType<typeof Client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
  } catch (e) {
    if (e instanceof TypeError && !(e instanceof client.ClientError)) throw unreachable(e);
    throw unauthorized(SSO_MESSAGES.idpAnswerInvalid(describeFailure(e)));
  }
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('нет ID-токена'));
  await checkSignature(keys, tokens.id_token, {
    of: 'ID-токена',
    field: 'id_token_signing_alg_values_supported',
    // RS256 when the document names none, as openid-client's own header check (OIDC Discovery makes RS256 the default).
    algorithms: allowedAlgorithms(meta.id_token_signing_alg_values_supported, 'RS256', secrets.client_secret),
    clientSecret: secrets.client_secret,
  });
  const userinfo =
    meta.userinfo_endpoint && tokens.access_token
      ? await userinfoClaims(config, keys, secrets, tokens.access_token, claims.sub)
      : {};
  return { ...userinfo, ...claims };
}
