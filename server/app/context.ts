import crypto from 'node:crypto';
import type { Actor } from '../auth/actor';
import type { SecurityLog } from '../auth/login';
import type { AppDeps } from './deps';

/** The same context serves REST and /trpc; auth is resolved lazily by the authed procedures. */
export interface Context {
  deps: AppDeps;
  authorization?: string;
  ip: string;
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
  return {
    deps,
    authorization: Array.isArray(auth) ? auth[0] : auth,
    ip: req.ip,
    requestId: req.id ?? crypto.randomUUID(),
    log: req.log,
  };
}
