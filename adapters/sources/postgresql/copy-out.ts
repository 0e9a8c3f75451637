import type { Writable } from 'node:stream';

/*
 * COPY ... TO STDOUT over the pg protocol, without pg-copy-streams: a "submittable" query that pg's client runs like
 * any other (client.query(new CopyOut(...))). The server's CopyData messages are written to `out` as they arrive;
 * when `out` is full the socket is paused, so the server waits instead of memory growing (TCP backpressure).
 */

/** Bytes of rows handed to `out` at once. */
const BATCH_BYTES = 256 * 1024;

interface PgConnection {
  query(text: string): void;
  stream: { pause(): void; resume(): void };
}

export class CopyOut {
  private connection: PgConnection | undefined;
  private failed: Error | undefined;
  private paused = false;
  private batch = Buffer.allocUnsafe(BATCH_BYTES);
  private used = 0;
  private settle!: { resolve: () => void; reject: (e: Error) => void };
  /** Resolves when the server has sent everything and is ready for the next statement. */
  readonly done = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
  rows = 0;

  constructor(
    private readonly text: string,
    private readonly out: Writable,
  ) {
    this.done.catch(() => undefined);
  }

  // The protocol of pg's Client for a submittable query.
  submit(connection: PgConnection): void {
    this.connection = connection;
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.failed) return;
    // One CopyData message is one row: rows are gathered into batches, so `out` sees a write per batch, not per row
    // (a write per row costs more than the server takes to make it). The chunk is a view of pg's receive buffer,
    // which is reused: it is copied into the batch.
    const chunk = msg.chunk;
    if (this.used + chunk.length > this.batch.length) this.flush();
    if (chunk.length > this.batch.length) {
      this.write(Buffer.from(chunk));
      return;
    }
    chunk.copy(this.batch, this.used);
    this.used += chunk.length;
  }

  /** Hands the gathered rows to `out`; when it is full the socket pauses until it drains. */
  private flush(): void {
    if (this.used === 0) return;
    const full = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafe(BATCH_BYTES);
    this.used = 0;
    this.write(full);
  }

  private write(data: Buffer): void {
    if (!this.out.write(data) && !this.paused) {
      const connection = this.connection!;
      this.paused = true;
      connection.stream.pause();
      this.out.once('drain', () => {
        this.paused = false;
        connection.stream.resume();
      });
    }
  }

  handleCommandComplete(msg: { text?: string }): void {
    const m = /^COPY (\d+)/.exec(msg.text ?? '');
    if (m) this.rows = Number(m[1]);
  }

  // pg's client hands an error to the active query and then forgets it: no ReadyForQuery follows for this query.
  handleError(err: Error): void {
    this.failed = err;
    this.connection?.stream.resume();
    this.settle.reject(err);
  }

  handleReadyForQuery(): void {
    if (this.failed) return;
    this.flush();
    this.settle.resolve();
  }

  // Messages a COPY TO never gets; pg may still call them on an odd server answer.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {
    this.handleError(new Error('COPY FROM is not supported here'));
  }
}
