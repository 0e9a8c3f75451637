import crypto, { type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomToken } from './opaque-tokens';
import { AppError } from '../kernel/errors';
import { TtlCache } from '../kernel/ttl-cache';

export const SESSION_TOKEN_TTL_SECONDS = 900;
const ISSUER = 'analytics-platform';

export interface SessionClaims {
  userId: number;
  groupIds: number[];
}

// jose re-imports a raw key on every call; a KeyObject is imported once per key.
const keyObjects = new WeakMap<Uint8Array, KeyObject>();
const keyObject = (key: Uint8Array) => {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = crypto.createSecretKey(key)));
  return k;
};

// A token verified once is remembered until shortly before it expires: verification (a WebCrypto round trip on
// the thread pool) was the largest cost of an authenticated request. Entries never outlive the token's `exp`.
// Kept per key, so a token is only ever recognised by the installation key that signed it.
const verifiedByKey = new WeakMap<Uint8Array, TtlCache<string, SessionClaims & { exp: number }>>();
const verifiedCache = (key: Uint8Array) => {
  let c = verifiedByKey.get(key);
  if (!c) verifiedByKey.set(key, (c = new TtlCache(60_000, 50_000)));
  return c;
};

/** The groups go into the token: a group change takes effect at the next login, as the specification says. */
export async function issueSessionToken(key: Uint8Array, claims: SessionClaims): Promise<string> {
  return new SignJWT({ grp: claims.groupIds })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.userId))
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setJti(randomToken(12))
    .setExpirationTime(Math.floor(Date.now() / 1000) + SESSION_TOKEN_TTL_SECONDS)
    .sign(keyObject(key));
}

export async function verifySessionToken(key: Uint8Array, token: string): Promise<SessionClaims> {
  const verified = verifiedCache(key);
  const hit = verified.get(token);
  if (hit && hit.exp * 1000 > Date.now()) return hit;
  try {
    const { payload } = await jwtVerify(token, keyObject(key), { algorithms: ['HS256'], issuer: ISSUER });
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
