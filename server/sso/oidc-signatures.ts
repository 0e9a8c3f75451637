import { compactVerify, createLocalJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet } from 'jose';
import { AppError, unauthorized } from '../kernel/errors';
import { isAllowedIdpAddress } from './idp-address';
import { SSO_MESSAGES } from './messages';

/*
 * The signature of what an OIDC provider signs for a login: the ID token of its token endpoint and a signed
 * (application/jwt) userinfo answer. openid-client 6 checks their claims and their `alg` header, not their signature
 * unless asked (enableNonRepudiationChecks); and when asked it keys through oauth4webapi's cache, which fetches the
 * key set again for an unknown kid only once the cached set is a minute old (jose's createRemoteJWKSet waits 30
 * seconds): a provider that starts signing with a new key right after a login would be refused for that minute. So
 * the platform checks the signature itself, by the rules below.
 */

const KEYS_TTL_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;

const ASYMMETRIC = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);
const SYMMETRIC = new Set(['HS256', 'HS384', 'HS512']);

/**
 * The algorithms a signed answer may use: those the discovery document advertises for it (`fallback` when it names
 * none), never `none`, and HS* only when advertised and the provider has a client secret, the HMAC key of OIDC Core
 * section 10.1 (a public-key provider's token is never checked with a secret it did not agree to use).
 */
export function allowedAlgorithms(
  advertised: unknown,
  fallback: string | undefined,
  clientSecret: string | undefined,
): string[] {
  const list = Array.isArray(advertised)
    ? advertised.filter((alg): alg is string => typeof alg === 'string')
    : fallback
      ? [fallback]
      : [];
  return list.filter((alg) => ASYMMETRIC.has(alg) || (SYMMETRIC.has(alg) && !!clientSecret));
}

const refused = (reason: string) => unauthorized(SSO_MESSAGES.idpAnswerInvalid(reason));
const unreachable = (reason: string, cause?: unknown) =>
  new AppError('service_unavailable', SSO_MESSAGES.idpUnreachable(reason), { cause });

type KeySet = ReturnType<typeof createLocalJWKSet>;

/** GET jwks_uri: https, or http on the loopback interface, as the discovery document itself. */
async function fetchKeySet(jwksUri: string | undefined): Promise<KeySet> {
  if (!jwksUri) throw refused('в документе обнаружения нет jwks_uri');
  const url = URL.parse(jwksUri);
  if (!url || !isAllowedIdpAddress(url)) {
    throw refused(`jwks_uri (${jwksUri}) должен быть https: http допустим только на локальном адресе`);
  }
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      headers: { accept: 'application/json, application/jwk-set+json' },
    });
  } catch (e) {
    throw unreachable(`jwks_uri: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw unreachable(`jwks_uri ответил ${res.status}`);
  }
  try {
    return createLocalJWKSet((await res.json()) as JSONWebKeySet);
  } catch (e) {
    throw refused(`набор ключей (jwks_uri) не разобран: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The signing keys of one provider (its jwks_uri), shared by its logins and kept five minutes. A token the kept set
 * does not verify (a kid it does not hold, or another key under a kid it holds) fetches the set again, once for that
 * token, so a key rotation at the provider takes effect at the next login. No token is worth more than that one fetch,
 * and no cool-down between fetches is needed: the tokens come from the provider's own endpoints over the back
 * channel, one per code redeemed there, never from the browser.
 */
export class ProviderKeys {
  private held?: { set: KeySet; at: number };
  private pending?: Promise<{ set: KeySet; at: number }>;

  constructor(private readonly jwksUri: string | undefined) {}

  /** One fetch at a time: the logins that need the set meanwhile share it. */
  private load() {
    this.pending ??= fetchKeySet(this.jwksUri)
      .then((set) => (this.held = { set, at: Date.now() }))
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Throws jose's error of the last attempt, or the AppError of a failed fetch. */
  async verify(jwt: string, alg: string): Promise<void> {
    let held = this.held;
    const fetched = !held || Date.now() - held.at >= KEYS_TTL_MS;
    if (fetched) held = await this.load();
    try {
      await compactVerify(jwt, held!.set, { algorithms: [alg] });
    } catch (e) {
      const stale = e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWSSignatureVerificationFailed;
      if (fetched || !stale) throw e;
      await compactVerify(jwt, (await this.load()).set, { algorithms: [alg] });
    }
  }
}

export interface SignedAnswer {
  /** The answer in the genitive, for the message: 'ID-токена', 'ответа userinfo'. */
  of: string;
  /** The discovery document's field the algorithms come from. */
  field: string;
  algorithms: string[];
  clientSecret: string | undefined;
}

/** A 401 naming the failed check unless `jwt` is signed with an allowed algorithm by the provider's key. */
export async function checkSignature(keys: ProviderKeys, jwt: string, answer: SignedAnswer): Promise<void> {
  const { of } = answer;
  let alg: unknown;
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(jwt);
    alg = header.alg;
    kid = header.kid === undefined ? undefined : String(header.kid);
  } catch {
    throw refused(SSO_MESSAGES.signatureUnchecked(of, 'заголовок JWS не разобран'));
  }
  if (alg === 'none') throw refused(SSO_MESSAGES.unsignedAnswer(of));
  if (typeof alg !== 'string' || !answer.algorithms.includes(alg)) {
    throw refused(SSO_MESSAGES.algNotAllowed(of, String(alg), answer.field, answer.algorithms));
  }
  try {
    if (SYMMETRIC.has(alg)) {
      await compactVerify(jwt, new TextEncoder().encode(answer.clientSecret), { algorithms: [alg] });
    } else {
      await keys.verify(jwt, alg);
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (e instanceof errors.JWKSNoMatchingKey) throw refused(SSO_MESSAGES.unknownSigningKey(of, kid));
    if (e instanceof errors.JWSSignatureVerificationFailed) {
      throw refused(SYMMETRIC.has(alg) ? SSO_MESSAGES.secretMismatch(of) : SSO_MESSAGES.signatureMismatch(of, kid));
    }
    if (e instanceof errors.JWKSMultipleMatchingKeys) {
      throw refused(
        SSO_MESSAGES.signatureUnchecked(
          of,
          'в наборе ключей провайдера несколько подходящих ключей, а в заголовке нет kid',
        ),
      );
    }
    throw refused(SSO_MESSAGES.signatureUnchecked(of, e instanceof Error ? e.message : String(e)));
  }
}
