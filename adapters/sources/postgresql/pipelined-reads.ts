import type pg from 'pg';
import type { Socket } from 'node:net';
import { LRUCache } from 'lru-cache';
import { errorCode } from '../driver-errors';
import type { RunControl } from '../run-control';

/**
 * One-trip reads (connector.ts, oneTripRead) waiting for a connection go out together: when the pool's connections
 * are all busy, the reads that queued meanwhile leave on the next free one as one write of several simple-protocol
 * texts, which the server runs back to back. Under load a widget read otherwise costs one socket write in this
 * process and one wake-up of a sleeping backend each; with several texts per write both are shared (bench:load,
 * misses). With a connection free a read goes at once, alone, as before.
 *
 * Each text is BEGIN READ ONLY ... ROLLBACK. A text that fails leaves its transaction aborted, so the texts behind it
 * on the same connection fail at their BEGIN (25P02) without running: those are sent again on the next batch, and
 * the connection gets its ROLLBACK before it goes back to the pool. A cancel (time budget, abort) reaches the backend
 * by pid, so it is sent only while the cancelled text is the one running; should it land on the next text instead,
 * that text (57014 without a cancel of its own) is sent again too. A connection that had a cancel sent on it is not
 * reused, as for every other read.
 *
 * A text waits behind those before it on its connection, so only reads known to be quick share one: a read whose
 * statement (its shape, the compiler's text before its values are written in) runs in over QUICK_MS, or has not run
 * yet, goes on a connection alone, and a slow widget does not hold up the quick ones of a dashboard.
 */

/** Texts in one write: enough to share the write and the wake-up, few enough that one batch is not a long queue. */
const MAX_BATCH = 16;
/** A read sent again this many times (each time behind another's failure) is answered with its last error. */
const MAX_RESENDS = 3;
/** A statement known to run within this many milliseconds (see ran()) may share a connection with others. */
const QUICK_MS = 10;
/**
 * Characters of statement text whose run times are remembered, per source: the widgets of a busy server with their
 * filter shapes (a statement is typically 0.3-2 KB), bounded so that many sources cannot add up to much.
 */
const SHAPES_KEPT_CHARS = 1_000_000;

interface Read {
  text: string;
  shape: string;
  control: RunControl;
  resolve: (result: pg.QueryResult<unknown[]>) => void;
  reject: (err: unknown) => void;
  state: 'queued' | 'sent' | 'done';
  cancelWanted: boolean;
  resends: number;
  batch?: Batch;
}

interface Batch {
  pid: number;
  reads: Read[];
  /** Index of the text the server runs now (the first not yet answered). */
  head: number;
  cancelSent: boolean;
}

export class PipelinedReads {
  private readonly queue: Read[] = [];
  private draining = 0;
  /** Each statement's run time, ms (from its answer and the one before it on the connection; see ran()). */
  private readonly lastRun = new LRUCache<string, number>({
    maxSize: SHAPES_KEPT_CHARS,
    sizeCalculation: (_ms, shape) => shape.length + 64,
  });

  constructor(
    private readonly acquire: () => Promise<pg.PoolClient>,
    private readonly lanes: number,
    private readonly cancelBackend: (pid: number) => Promise<void>,
  ) {}

  /** The answer of the text's SELECT (the statement before its ROLLBACK); `shape` names its statement. */
  read(text: string, shape: string, control: RunControl): Promise<pg.QueryResult<unknown[]>> {
    return new Promise((resolve, reject) => {
      const read: Read = { text, shape, control, resolve, reject, state: 'queued', cancelWanted: false, resends: 0 };
      control.onCancel(() => this.cancel(read));
      if (read.state === 'done') return; // stopped before it was asked
      this.queue.push(read);
      if (this.draining < this.lanes) void this.drain();
    });
  }

  private cancel(read: Read): void {
    if (read.state === 'queued') {
      const at = this.queue.indexOf(read);
      if (at >= 0) this.queue.splice(at, 1);
      read.state = 'done';
      read.reject(read.control.stopError());
      return;
    }
    if (read.state !== 'sent' || !read.batch) return;
    read.cancelWanted = true;
    const batch = read.batch;
    if (batch.reads[batch.head] === read) this.cancelRunning(batch);
  }

  private cancelRunning(batch: Batch): void {
    batch.cancelSent = true;
    void this.cancelBackend(batch.pid).catch(() => {});
  }

  /** One lane: takes a connection, sends what has queued, and again until the queue is empty. */
  private async drain(): Promise<void> {
    this.draining++;
    try {
      while (this.queue.length > 0) {
        let client: pg.PoolClient;
        try {
          client = await this.acquire();
        } catch (err) {
          // No connection to be had (the server is down, the connector closed): every waiting read is told so.
          for (const read of this.queue.splice(0)) {
            read.state = 'done';
            read.reject(err);
          }
          return;
        }
        const reads = this.nextBatch();
        if (reads.length === 0) {
          client.release();
          return;
        }
        await this.send(client, reads);
      }
    } finally {
      this.draining--;
    }
  }

  /** The first read waiting and, when it is quick, the quick ones behind it (slow ones keep their places). */
  private nextBatch(): Read[] {
    const first = this.queue.shift();
    if (!first) return [];
    const reads = [first];
    if (!this.isQuick(first)) return reads;
    for (let i = 0; i < this.queue.length && reads.length < MAX_BATCH;) {
      if (this.isQuick(this.queue[i])) reads.push(...this.queue.splice(i, 1));
      else i++;
    }
    return reads;
  }

  /**
   * Measured from this process, a run time includes the time the event loop took to read the answer, so one slow
   * reading of a quick statement does not make it slow: the figure kept at most doubles per run (a statement that
   * really became slow is known as such after a few), and falls at once to any lower one.
   */
  private ran(shape: string, ms: number): void {
    const before = this.lastRun.get(shape);
    this.lastRun.set(shape, before === undefined ? ms : Math.min(ms, before * 2 + 1));
  }

  private isQuick(read: Read): boolean {
    const ms = this.lastRun.get(read.shape);
    return ms !== undefined && ms <= QUICK_MS;
  }

  /** Sends the texts in one write, answers each read as its text's answer arrives, then releases the connection. */
  private send(client: pg.PoolClient, reads: Read[]): Promise<void> {
    const batch: Batch = {
      pid: (client as unknown as { processID: number }).processID,
      reads,
      head: 0,
      cancelSent: false,
    };
    const resend: Read[] = [];
    let lost = false;
    let lastFailed = false;
    let since = performance.now(); // when the server could start on the text answered next
    return new Promise<void>((done) => {
      const answered = (read: Read, i: number, err: Error | null, result: unknown) => {
        const now = performance.now();
        const ms = now - since;
        since = now;
        batch.head = i + 1;
        const next = reads[batch.head];
        if (next?.cancelWanted) this.cancelRunning(batch);
        lastFailed = err !== null;
        if (err === null) {
          this.ran(read.shape, ms);
          read.state = 'done';
          const results = result as pg.QueryResult<unknown[]>[];
          read.resolve(results[results.length - 2]);
        } else {
          const code = errorCode(err);
          // Stopped at its BEGIN by the failure before it, or by a cancel meant for the text before it.
          const notItsOwn = !read.cancelWanted && (code === '25P02' || code === '57014');
          if (notItsOwn && read.resends < MAX_RESENDS) {
            read.resends++;
            read.state = 'queued';
            read.batch = undefined;
            resend.push(read);
          } else {
            this.ran(read.shape, ms);
            // Without a SQLSTATE the connection itself failed: it does not go back to the pool.
            if (!code || code.startsWith('08') || code.startsWith('57P')) lost = true;
            read.state = 'done';
            read.reject(err);
          }
        }
        if (batch.head === reads.length) {
          // A read cancelled while waiting to be sent again has had its answer.
          this.queue.unshift(...resend.filter((r) => r.state === 'queued'));
          this.release(client, lost || batch.cancelSent, lastFailed).then(done, done);
        }
      };
      const stream = (client as unknown as { connection?: { stream?: Partial<Pick<Socket, 'cork' | 'uncork'>> } })
        .connection?.stream;
      stream?.cork?.();
      try {
        reads.forEach((read, i) => {
          read.state = 'sent';
          read.batch = batch;
          client.query({ text: read.text, rowMode: 'array' }, (err: Error | null, result: unknown) =>
            answered(read, i, err, result),
          );
        });
      } finally {
        stream?.uncork?.();
      }
    });
  }

  /** Back to the pool: an aborted transaction (the last text failed) is rolled back first; a broken one is dropped. */
  private async release(client: pg.PoolClient, broken: boolean, aborted: boolean): Promise<void> {
    if (broken) return client.release(true);
    if (!aborted) return client.release();
    try {
      await client.query('ROLLBACK');
      client.release();
    } catch {
      client.release(true);
    }
  }
}
