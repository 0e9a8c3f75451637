import * as client from 'openid-client';
import { AppError, badRequest, unauthorized } from '../kernel/errors';
import { isLoopback } from './idp-address';
import { SSO_MESSAGES } from './messages';
import type { OidcSettings, ProviderSecrets } from './provider-settings';
import type { SsoProviderRow } from './store';

/*
 * OpenID Connect with openid-client: discovery, authorization code with PKCE (S256), state and nonce, the ID token
 * verified against the keys of the discovery document, then the userinfo claims. Plain http is allowed only for an
 * issuer on the loopback interface (idp-address.ts).
 */

const DISCOVERY_TTL_MS = 5 * 60_000;
const discovered = new Map<string, { config: client.Configuration; at: number }>();

async function discover(settings: OidcSettings, secrets: ProviderSecrets): Promise<client.Configuration> {
  const issuer = new URL(settings.issuer_url);
  const execute = issuer.protocol === 'http:' && isLoopback(issuer) ? [client.allowInsecureRequests] : [];
  return client.discovery(
    issuer,
    settings.client_id,
    secrets.client_secret,
    secrets.client_secret ? client.ClientSecretBasic(secrets.client_secret) : client.None(),
    { execute, timeout: 10 },
  );
}

const unreachable = (e: unknown) =>
  new AppError('service_unavailable', SSO_MESSAGES.idpUnreachable(e instanceof Error ? e.message : String(e)), {
    cause: e,
  });

/** The provider's client configuration, discovered once per provider version and reused for a few minutes. */
async function configurationOf(
  row: SsoProviderRow,
  settings: OidcSettings,
  secrets: ProviderSecrets,
): Promise<client.Configuration> {
  const key = `${row.id}:${row.updatedAt.getTime()}`;
  const hit = discovered.get(key);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.config;
  let config: client.Configuration;
  try {
    config = await discover(settings, secrets);
  } catch (e) {
    throw unreachable(e);
  }
  for (const k of discovered.keys()) if (k.startsWith(`${row.id}:`)) discovered.delete(k);
  discovered.set(key, { config, at: Date.now() });
  return config;
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
  const config = await configurationOf(row, settings, secrets);
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

/**
 * The callback: the code traded with the PKCE verifier, state and nonce checked, the ID token verified; answers the
 * ID token claims merged over the userinfo claims. Any failed check is a 401 naming it.
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
  const config = await configurationOf(row, settings, secrets);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
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
  if (!claims) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('нет ID-токена'));
  let userinfo: Record<string, unknown> = {};
  if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
    try {
      userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    } catch (e) {
      throw badRequest(SSO_MESSAGES.idpAnswerInvalid(e instanceof Error ? e.message : String(e)));
    }
  }
  return { ...userinfo, ...claims };
}
