import crypto, { type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomToken } from './opaque-tokens';
import { AppError } from '../kernel/errors';
import { cacheSlot } from '../kernel/app-caches';
import { TtlCache } from '../kernel/ttl-cache';
import type { AppDeps } from '../app/deps';

export const SESSION_TOKEN_TTL_SECONDS = 900;
const ISSUER = 'analytics-platform';

export interface SessionClaims {
  userId: number;
  groupIds: number[];
}

type VerifiedClaims = SessionClaims & { exp: number };

/**
 * What signing and verifying keep between requests, per app. jose re-imports a raw key
 * on every call: the key is imported once. A token verified once is remembered until shortly before it expires:
 * verification (a WebCrypto round trip on the thread pool) was the largest cost of an authenticated request; entries
 * never outlive the token's `exp`. Both belong to one key, and another key starts afresh, so a token is only ever
 * recognised by the installation key that signed it.
 */
class SessionTokenCache {
  private key: Uint8Array | undefined;
  private keyObject: KeyObject | undefined;
  private verified = new TtlCache<string, VerifiedClaims>(60_000, 50_000);

  of(key: Uint8Array): { keyObject: KeyObject; verified: TtlCache<string, VerifiedClaims> } {
    if (key !== this.key || !this.keyObject) {
      this.key = key;
      this.keyObject = crypto.createSecretKey(key);
      this.verified = new TtlCache(60_000, 50_000);
    }
    return { keyObject: this.keyObject, verified: this.verified };
  }
}

const sessionTokenCaches = cacheSlot('auth.sessionTokens', () => new SessionTokenCache());

/** The app's signing key and the cache that goes with it. */
type SessionTokenDeps = Pick<AppDeps, 'signingKey' | 'caches'>;

/** The groups go into the token: a group change takes effect at the next login, as the specification says. */
export async function issueSessionToken(deps: SessionTokenDeps, claims: SessionClaims): Promise<string> {
  return new SignJWT({ grp: claims.groupIds })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.userId))
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setJti(randomToken(12))
    .setExpirationTime(Math.floor(Date.now() / 1000) + SESSION_TOKEN_TTL_SECONDS)
    .sign(deps.caches.of(sessionTokenCaches).of(deps.signingKey).keyObject);
}

/**
 * The token's claims. A token this node verified already and that has not expired is answered as it is, not in a
 * promise (every request of a signed-in user comes here); any other is verified.
 */
export function verifySessionToken(deps: SessionTokenDeps, token: string): SessionClaims | Promise<SessionClaims> {
  const { keyObject, verified } = deps.caches.of(sessionTokenCaches).of(deps.signingKey);
  const hit = verified.get(token);
  if (hit && hit.exp * 1000 > Date.now()) return hit;
  return verifyFresh(token, keyObject, verified);
}

async function verifyFresh(
  token: string,
  keyObject: KeyObject,
  verified: TtlCache<string, VerifiedClaims>,
): Promise<SessionClaims> {
  try {
    const { payload } = await jwtVerify(token, keyObject, { algorithms: ['HS256'], issuer: ISSUER });
    const userId = Number(payload.sub);
    const grp = payload.grp;
    if (!Number.isInteger(userId) || !Array.isArray(grp) || !grp.every((g) => Number.isInteger(g))) {
      throw new AppError('unauthorized', 'Недействительный токен');
    }
    const claims = { userId, groupIds: grp as number[], exp: payload.exp ?? 0 };
    verified.set(token, claims);
    return claims;
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (e instanceof joseErrors.JWTExpired) throw new AppError('unauthorized', 'Срок действия токена истёк');
    throw new AppError('unauthorized', 'Недействительный токен');
  }
}
