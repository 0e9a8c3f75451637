import pg from 'pg';
import type { Notification } from 'pg';

/*
 * One LISTEN connection to the metadata database: a pg.Client of its own (a pooled connection would go back to the
 * pool and stop hearing), made with the app pool's settings, that reconnects with backoff when it drops. Used by the
 * cache bus (server/cluster/cache-bus.ts: other nodes' cache changes) and by pg-boss (server/jobs/jobs.ts: a job sent
 * on any node wakes the workers of its queue). Nothing is heard while it is down: each user decides what a drop
 * costs it (the cache bus clears every read cache; pg-boss's workers find jobs by their slow poll meanwhile, and each
 * fetches once when it is back).
 */

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

export interface ListenHandlers {
  /** A NOTIFY on the channel, with its payload ('' when it had none). */
  onNotification: (payload: string) => void;
  /** After each LISTEN is in place (the first and every one after a drop), with the session's backend pid. */
  onListening?: (pid: number) => void;
  /** After a connection that was listening dropped (not after a failed attempt to connect). */
  onDropped?: () => void;
}

export class ListenConnection {
  private client: pg.Client | undefined;
  private closed = false;
  private started: Promise<boolean> | undefined;
  private backoff = BACKOFF_MIN_MS;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: pg.ClientConfig,
    private readonly channel: string,
    private readonly handlers: ListenHandlers,
  ) {}

  /**
   * Connects and listens; true once the first LISTEN is in place, false when that first attempt failed (it goes on
   * trying in the background until closed). Idempotent.
   */
  start(): Promise<boolean> {
    this.started ??= this.connect();
    return this.started;
  }

  private async connect(): Promise<boolean> {
    if (this.closed) return false;
    // TCP keepalive: a peer that vanished without closing the socket is noticed instead of listened to for ever.
    const client = new pg.Client({ ...this.settings, keepAlive: true });
    this.client = client;
    let up = false;
    const dropped = () => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.closed) return;
      if (up) this.handlers.onDropped?.();
      this.retry = setTimeout(() => void this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    };
    client.on('error', dropped);
    client.on('end', dropped);
    client.on('notification', (m: Notification) => {
      if (m.channel === this.channel) this.handlers.onNotification(m.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel.replaceAll('"', '""')}"`);
      const r = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      if (this.closed || this.client !== client) {
        void client.end().catch(() => undefined);
        return false;
      }
      up = true;
      this.backoff = BACKOFF_MIN_MS;
      this.handlers.onListening?.(r.rows[0].pid);
      return true;
    } catch {
      dropped();
      return false;
    }
  }

  /** Closes the connection and stops reconnecting. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    client?.removeAllListeners('notification');
    await client?.end().catch(() => undefined);
  }
}
