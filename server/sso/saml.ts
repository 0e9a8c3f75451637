import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import { AppError, badRequest, unauthorized } from '../kernel/errors';
import { isAllowedIdpAddress } from './idp-address';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata';
import { SSO_MESSAGES } from './messages';
import type { ProviderSecrets, SamlSettings } from './provider-settings';

/*
 * SAML 2.0 with @node-saml/node-saml, SP-initiated only: every response must answer an AuthnRequest this platform
 * sent (InResponseTo = the request id kept in the login state), its assertion must be signed by a key of the IdP
 * metadata, name our entity id as audience, be inside its time window (one minute of clock skew), be addressed to
 * our ACS URL (Destination), and carry an assertion id not seen before (checked by the caller, store.ts).
 */

const CLOCK_SKEW_MS = 60_000;
const METADATA_TTL_MS = 5 * 60_000;
const fetchedMetadata = new Map<string, { meta: IdpMetadata; at: number }>();

async function fetchMetadataXml(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.text();
}

/** The IdP metadata of the settings: the XML given, or fetched from its URL (cached a few minutes). */
export async function idpMetadataOf(settings: SamlSettings, opts: { fresh?: boolean } = {}): Promise<IdpMetadata> {
  let xml = settings.idp_metadata_xml;
  const url = settings.idp_metadata_url;
  if (!xml && url) {
    // Checked at save too; a provider stored before that rule must not be fetched over plain http either.
    if (!isAllowedIdpAddress(new URL(url))) throw badRequest(SSO_MESSAGES.insecureIdpUrl);
    const hit = fetchedMetadata.get(url);
    if (hit && !opts.fresh && Date.now() - hit.at < METADATA_TTL_MS) return hit.meta;
    try {
      xml = await fetchMetadataXml(url);
    } catch (e) {
      throw new AppError(
        'service_unavailable',
        SSO_MESSAGES.idpUnreachable(e instanceof Error ? e.message : String(e)),
      );
    }
  }
  const parsed = parseIdpMetadata(xml ?? '');
  if ('error' in parsed) throw new AppError('bad_request', SSO_MESSAGES.idpAnswerInvalid(parsed.error));
  if (!settings.idp_metadata_xml && url) fetchedMetadata.set(url, { meta: parsed, at: Date.now() });
  return parsed;
}

export interface SamlEndpoints {
  entityId: string;
  acsUrl: string;
}

/** Keeps node-saml's request ids out of process memory: the one id of this login lives in its login state. */
class OneRequestCache implements CacheProvider {
  saved: string | null = null;
  constructor(private readonly expected: string | null) {}
  async saveAsync(key: string, value: string) {
    this.saved = key;
    return { value, createdAt: Date.now() };
  }
  /** node-saml reads the value as the request's creation instant; the login state's own expiry already bounds it. */
  async getAsync(key: string) {
    return key === this.expected ? new Date().toISOString() : null;
  }
  async removeAsync(key: string | null) {
    return key;
  }
}

/** node-saml (and its XML signature stack) loads with the first SAML login or metadata request, not with the server. */
function nodeSaml(): Promise<typeof import('@node-saml/node-saml')> {
  return import('@node-saml/node-saml');
}

async function samlClient(
  meta: IdpMetadata,
  settings: SamlSettings,
  secrets: ProviderSecrets,
  endpoints: SamlEndpoints,
  cache: CacheProvider,
): Promise<SAML> {
  const { SAML: Client, ValidateInResponseTo } = await nodeSaml();
  return new Client({
    callbackUrl: endpoints.acsUrl,
    entryPoint: meta.ssoUrl,
    issuer: endpoints.entityId,
    audience: endpoints.entityId,
    idpCert: meta.certificates,
    idpIssuer: meta.entityId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: cache,
    privateKey: secrets.sp_private_key,
    publicCert: settings.sp_certificate,
    signatureAlgorithm: 'sha256',
    identifierFormat: null,
    disableRequestedAuthnContext: true,
  });
}

/** The IdP's SSO URL with a signed AuthnRequest (HTTP-Redirect binding) and the request's id. */
export async function samlAuthorizeUrl(
  settings: SamlSettings,
  secrets: ProviderSecrets,
  endpoints: SamlEndpoints,
  relayState: string,
): Promise<{ url: string; requestId: string }> {
  const cache = new OneRequestCache(null);
  const saml = await samlClient(await idpMetadataOf(settings), settings, secrets, endpoints, cache);
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
  if (!cache.saved) throw new Error('node-saml did not report the AuthnRequest id');
  return { url, requestId: cache.saved };
}

const first = (xml: string, pattern: RegExp) => pattern.exec(xml)?.[1];

export interface SamlLogin {
  profile: Profile;
  assertionId: string;
  /** Until when the assertion could be presented at all: how long its id must be remembered. */
  validUntil: Date;
}

/** Validates a POSTed SAMLResponse against the login state's request id; 401 naming the failed check. */
export async function samlAcs(
  settings: SamlSettings,
  secrets: ProviderSecrets,
  endpoints: SamlEndpoints,
  samlResponse: string,
  requestId: string,
): Promise<SamlLogin> {
  const meta = await idpMetadataOf(settings);
  const saml = await samlClient(meta, settings, secrets, endpoints, new OneRequestCache(requestId));
  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (e) {
    throw unauthorized(SSO_MESSAGES.idpAnswerInvalid(e instanceof Error ? e.message : String(e)));
  }
  if (!profile) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('ответ не содержит утверждения'));
  const responseXml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const destination = first(responseXml, /<(?:[\w.-]+:)?Response\b[^>]*?\sDestination="([^"]*)"/);
  if (destination !== endpoints.acsUrl) {
    throw unauthorized(SSO_MESSAGES.idpAnswerInvalid(`Destination ответа не равен адресу ACS (${endpoints.acsUrl})`));
  }
  const assertionXml = profile.getAssertionXml?.() ?? '';
  const assertionId = first(assertionXml, /<(?:[\w.-]+:)?Assertion\b[^>]*?\sID="([^"]+)"/);
  if (!assertionId) throw unauthorized(SSO_MESSAGES.idpAnswerInvalid('у утверждения нет ID'));
  const ends = [...assertionXml.matchAll(/\sNotOnOrAfter="([^"]+)"/g)]
    .map((m) => Date.parse(m[1]))
    .filter(Number.isFinite);
  // An assertion without an end of validity is remembered for a day: longer than any login takes to replay.
  const validUntil = new Date(ends.length ? Math.max(Date.now(), ...ends) + CLOCK_SKEW_MS : Date.now() + 86_400_000);
  return { profile, assertionId, validUntil };
}

/** GET /api/sso-providers/{id}/sp-metadata: entity id, ACS URL and the signing certificate, unsigned XML. */
export async function samlSpMetadata(
  settings: SamlSettings,
  secrets: ProviderSecrets,
  endpoints: SamlEndpoints,
): Promise<string> {
  const { generateServiceProviderMetadata } = await nodeSaml();
  return generateServiceProviderMetadata({
    issuer: endpoints.entityId,
    callbackUrl: endpoints.acsUrl,
    privateKey: secrets.sp_private_key,
    publicCerts: settings.sp_certificate,
    wantAssertionsSigned: true,
    identifierFormat: null,
  });
}
