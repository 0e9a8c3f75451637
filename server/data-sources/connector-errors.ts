import { ConnectorError } from '../../adapters/sources';
import { AppError } from '../kernel/errors';

/**
 * A source that cannot be reached, refuses the password or rejects the SQL is the caller's problem to fix, not a
 * platform failure: the driver's own words go back in a 400. Anything else keeps its own status (or becomes 500).
 */
export function asSourceError(err: unknown): unknown {
  // The platform's own connection budget is full: nothing for the caller to fix, worth retrying shortly.
  // The driver's own error goes along as the cause: the caller sees the short message, the log the whole story.
  if (err instanceof ConnectorError && err.kind === 'busy')
    return new AppError('service_unavailable', err.message, { cause: err });
  if (err instanceof ConnectorError)
    return new AppError('bad_request', err.message || 'Ошибка источника данных', { cause: err });
  return err;
}

/** Runs a call on a connector, turning its failures into 400 envelopes. */
export async function viaConnector<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asSourceError(err);
  }
}
