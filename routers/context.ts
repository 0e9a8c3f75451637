import crypto from 'node:crypto';
import type { Actor } from '../server/auth/actor';
import type { SecurityLog } from '../server/auth/login';
import type { AppDeps } from '../server/app/deps';

/** The same context serves REST and /trpc (server/app/app.ts makes it per request); auth is resolved lazily by the authed procedures. */
export interface Context {
  deps: AppDeps;
  authorization?: string;
  /** X-Share-Grant: the grant of an unlocked password share link (only the public viewer paths read it). */
  shareGrant?: string;
  ip: string;
  /** The Origin header a browser sends with a cross-site or script POST (the SSO code exchange checks it). */
  origin?: string;
  /** The Cookie header (the SSO code exchange checks the browser binding cookie in it; nothing else reads cookies). */
  cookie?: string;
  requestId: string;
  actor?: Actor;
  /** The request's logger, for security events a procedure reports (a replayed refresh token). */
  log?: SecurityLog;
}

export function createContext(
  deps: AppDeps,
  req: { headers: Record<string, string | string[] | undefined>; ip: string; id?: string; log?: SecurityLog },
): Context {
  const auth = req.headers.authorization;
  const grant = req.headers['x-share-grant'];
  const origin = req.headers.origin;
  const cookie = req.headers.cookie;
  return {
    deps,
    authorization: Array.isArray(auth) ? auth[0] : auth,
    shareGrant: Array.isArray(grant) ? grant[0] : grant,
    ip: req.ip,
    origin: Array.isArray(origin) ? origin[0] : origin,
    cookie: Array.isArray(cookie) ? cookie.join('; ') : cookie,
    requestId: req.id ?? crypto.randomUUID(),
    log: req.log,
  };
}
