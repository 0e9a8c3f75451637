import { ConnectorError } from './types';

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE',
  'ECONNABORTED', 'ESOCKETTIMEDOUT', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'EPROTO',
]);

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

/** Socket-level failures (refused, unknown host, TLS) that mean "cannot reach the server". */
export function isNetworkError(err: unknown): boolean {
  const code = errorCode(err);
  if (code && NETWORK_CODES.has(code)) return true;
  if (err instanceof AggregateError) return err.errors.some(isNetworkError);
  return false;
}

/** The connection-failure message users see: where we tried, within what time, and the driver's words. */
export function connectionError(server: string, err: unknown, timeoutMs?: number): ConnectorError {
  const why = errorMessage(err);
  const within = timeoutMs ? ` за ${Math.round(timeoutMs / 100) / 10} с` : '';
  return new ConnectorError(`Не удалось подключиться к ${server}${within}: ${why}`, 'connection', { cause: err });
}
