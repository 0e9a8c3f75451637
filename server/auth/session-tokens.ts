import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomToken } from './opaque-tokens';
import { AppError } from '../errors';

export const SESSION_TOKEN_TTL_SECONDS = 900;
const ISSUER = 'analytics-platform';

export interface SessionClaims {
  userId: number;
  groupIds: number[];
}

/** The groups go into the token: a group change takes effect at the next login, as the specification says. */
export async function issueSessionToken(key: Uint8Array, claims: SessionClaims): Promise<string> {
  return new SignJWT({ grp: claims.groupIds })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(claims.userId))
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setJti(randomToken(12))
    .setExpirationTime(Math.floor(Date.now() / 1000) + SESSION_TOKEN_TTL_SECONDS)
    .sign(key);
}

export async function verifySessionToken(key: Uint8Array, token: string): Promise<SessionClaims> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER });
    const userId = Number(payload.sub);
    const grp = payload.grp;
    if (!Number.isInteger(userId) || !Array.isArray(grp) || !grp.every((g) => Number.isInteger(g))) {
      throw new AppError('unauthorized', 'Недействительный токен');
    }
    return { userId, groupIds: grp as number[] };
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (e instanceof joseErrors.JWTExpired) throw new AppError('unauthorized', 'Срок действия токена истёк');
    throw new AppError('unauthorized', 'Недействительный токен');
  }
}
