import { ConnectorError } from './types';

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function errorMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) return errorMessage(err.errors[0]);
  if (err instanceof Error && err.message) return err.message;
  const code = errorCode(err);
  return code ?? String(err);
}

/** What a user is told when a source cannot be reached; the driver's text stays in `cause` (and the log). */
export type ConnectionOutcome = 'refused' | 'timeout' | 'not-found' | 'tls' | 'dropped' | 'not-server';

/** A dropped connection mid-query: the same words whatever the driver said. */
export const DROPPED_MESSAGE = 'Подключение к источнику прервано';

const REFUSED_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EADDRNOTAVAIL']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED_TIMEOUT']);
const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);
const DROPPED_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'PROTOCOL_CONNECTION_LOST',
]);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'EPROTO',
  'HOSTNAME_MISMATCH',
  'HANDSHAKE_NO_SSL_SUPPORT',
]);

/** The codes of the error and of what it wraps (AggregateError of several addresses, `cause`). */
function codes(err: unknown, depth = 0): string[] {
  if (!err || depth > 3) return [];
  const own = errorCode(err);
  const nested = err instanceof AggregateError ? err.errors.flatMap((e) => codes(e, depth + 1)) : [];
  const cause = err instanceof Error ? codes(err.cause, depth + 1) : [];
  return [...(own ? [own] : []), ...nested, ...cause];
}

/**
 * Which of the few connection outcomes a driver failure is, by socket error code and the drivers' own fixed
 * texts; undefined when it is not a connection failure at all (a server's answer to the query).
 */
export function connectionOutcome(err: unknown): ConnectionOutcome | undefined {
  const all = codes(err);
  const message = errorMessage(err);
  if (all.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_SSL_') || c.startsWith('ERR_TLS_'))) return 'tls';
  if (all.some((c) => REFUSED_CODES.has(c))) return 'refused';
  if (all.some((c) => NOT_FOUND_CODES.has(c))) return 'not-found';
  if (
    all.some((c) => TIMEOUT_CODES.has(c)) ||
    /\btime(d)? ?out\b|timeout (expired|exceeded)|due to connection timeout/i.test(message)
  )
    return 'timeout';
  if (
    all.some((c) => DROPPED_CODES.has(c)) ||
    /connection terminated|socket hang up|^aborted$|premature close|connection lost|server closed the connection|not queryable|read ECONNRESET/i.test(
      message,
    )
  )
    return 'dropped';
  if (/\b(ssl|tls)\b|certificate|secure connection/i.test(message)) return 'tls';
  return undefined;
}

/** Socket-level failures (refused, unknown host, TLS, dropped) that mean "cannot reach the server". */
export function isNetworkError(err: unknown): boolean {
  return connectionOutcome(err) !== undefined;
}

/**
 * The connection-failure message users see: one of a few fixed Russian outcomes naming the server as the user
 * typed it; never the driver's or a foreign service's words (a port that answers something else is "not a
 * <product> server", whatever it said).
 */
export function connectionError(
  server: string,
  err: unknown,
  opts: { product: string; timeoutMs: number; outcome?: ConnectionOutcome },
): ConnectorError {
  const outcome = opts.outcome ?? connectionOutcome(err) ?? 'not-server';
  return new ConnectorError(outcomeMessage(outcome, server, opts), 'connection', { cause: err });
}

export function outcomeMessage(
  outcome: ConnectionOutcome,
  server: string,
  opts: { product: string; timeoutMs: number },
): string {
  switch (outcome) {
    case 'refused':
      return `Сервер ${server} отклонил подключение`;
    case 'timeout':
      return `Сервер ${server} не ответил за ${Math.round(opts.timeoutMs / 100) / 10} с`;
    case 'not-found':
      return `Адрес сервера ${server} не найден`;
    case 'tls':
      return `Ошибка TLS при подключении к ${server}`;
    case 'dropped':
      return DROPPED_MESSAGE;
    case 'not-server':
      return `Сервер ${server} не является сервером ${opts.product}`;
  }
}

/**
 * Authentication refused: the outcome and the server's own reason (which names the user, never the password).
 * `reason` when the driver's message needs trimming first.
 */
export function authError(server: string, err: unknown, code?: string, reason = errorMessage(err)): ConnectorError {
  return new ConnectorError(`Ошибка аутентификации на сервере ${server}: ${reason}`, 'auth', { cause: err, code });
}
