import { ConnectorError, type QueryOptions } from './types';

export type StopReason = 'timeout' | 'cancelled';

/**
 * Watches one query's time budget and abort signal. When either fires it calls the connector's cancel
 * (which stops the query on the server) and remembers why, so the driver error that follows (for example
 * PostgreSQL's "canceling statement due to user request") is reported as timeout / cancelled.
 */
export class RunControl {
  reason: StopReason | undefined;
  private timer: NodeJS.Timeout | undefined;
  private cancelFn: (() => Promise<void> | void) | undefined;
  private readonly onAbort = () => this.stop('cancelled');

  constructor(private readonly opts: QueryOptions = {}) {
    if (opts.signal?.aborted) this.reason = 'cancelled';
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (opts.timeoutMs && opts.timeoutMs > 0) {
      this.timer = setTimeout(() => this.stop('timeout'), opts.timeoutMs);
      this.timer.unref?.();
    }
  }

  /** The connector says how to stop what is running now; called again when that changes. */
  onCancel(fn: () => Promise<void> | void): void {
    this.cancelFn = fn;
    if (this.reason) void this.runCancel();
  }

  throwIfStopped(): void {
    if (this.reason) throw this.stopError();
  }

  /** A ConnectorError for a failure while this control was active. */
  error(err: unknown, mapDriverError: (err: unknown) => ConnectorError): ConnectorError {
    if (this.reason) return this.stopError(err);
    if (err instanceof ConnectorError) return err;
    return mapDriverError(err);
  }

  stopError(cause?: unknown): ConnectorError {
    if (this.reason === 'timeout') {
      const seconds = Math.round(((this.opts.timeoutMs ?? 0) / 1000) * 10) / 10;
      return new ConnectorError(`Превышено время выполнения запроса (${seconds} с)`, 'timeout', { cause });
    }
    return new ConnectorError('Запрос отменён', 'cancelled', { cause });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    this.cancelFn = undefined;
  }

  private stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    void this.runCancel();
  }

  private async runCancel(): Promise<void> {
    const fn = this.cancelFn;
    if (!fn) return;
    try {
      await fn();
    } catch {
      // Cancelling is best effort: the query may have finished meanwhile.
    }
  }
}
