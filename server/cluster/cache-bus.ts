import crypto from 'node:crypto';
import type { Pool } from 'pg';
import { ListenConnection } from '../../db/listen';
import type { AppCaches, CacheChange } from '../kernel/app-caches';
import { applyCacheChange, clearAllReadCaches } from '../kernel/cache-changes';

/*
 * The transport of server/kernel/cache-changes.ts between nodes: NOTIFY on the metadata database for what this
 * node's writes made stale, and one LISTEN connection of its own (db/listen.ts) for what the others' did. Nothing is
 * heard while that connection is down, so a drop clears every read cache, then it reconnects with backoff (and clears
 * once more when it is back).
 */

const CHANNEL = 'app_cache_changes';
/** NOTIFY payloads must stay under 8000 bytes: a larger batch goes in several messages. */
const MAX_PAYLOAD = 7_000;

/** The node's NOTIFY sender and LISTEN receiver. One per app; started with the app and stopped when it closes. */
export class CacheBus {
  /** This node's id in every payload, so that it ignores its own messages. */
  readonly nodeId = crypto.randomUUID();
  /** Messages from other nodes applied so far (tests await them). */
  applied = 0;
  /** Times the LISTEN connection dropped and every read cache was cleared. */
  drops = 0;
  /** Resolves once the first LISTEN is in place (or at once when the bus is off). */
  ready: Promise<void>;
  private markReady!: () => void;
  private listener: ListenConnection | undefined;
  private stopped = false;
  private pending: CacheChange[] = [];
  private flushing: NodeJS.Immediate | undefined;
  private sending = new Set<Promise<unknown>>();
  /** The LISTEN connection's backend pid (tests terminate it). */
  listenerPid: number | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly caches: AppCaches,
    /** Off on a single node with its embedded database: nothing to tell and nobody to listen to. */
    readonly enabled: boolean,
  ) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    if (!enabled) this.markReady();
  }

  /** Sends the change to the other nodes after this tick (many epoch bumps in one tick are one message). */
  publish(change: CacheChange): void {
    if (!this.enabled || this.stopped) return;
    if (change.kind === 'epoch' && this.pending.some((c) => c.kind === 'epoch')) return;
    this.pending.push(change);
    // setImmediate, not a microtask: a caller that bumps the epoch right after its commit returns first, and the
    // message leaves once the writes of this turn are all in.
    this.flushing ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = undefined;
    const changes = this.pending;
    this.pending = [];
    for (const payload of payloads(this.nodeId, changes)) {
      const sent = this.pool
        .query('SELECT pg_notify($1, $2)', [CHANNEL, payload])
        // A lost message leaves the other nodes on their TTLs: the write itself is committed and stands.
        .catch(() => undefined)
        .finally(() => this.sending.delete(sent));
      this.sending.add(sent);
    }
  }

  /** Opens the LISTEN connection in the background; `ready` resolves when it listens. */
  start(): void {
    if (!this.enabled || this.stopped || this.listener) return;
    this.listener = new ListenConnection(this.pool.options, CHANNEL, {
      onNotification: (payload) => this.receive(payload),
      onListening: (pid) => {
        this.listenerPid = pid;
        // What changed between a drop and this LISTEN was not heard either.
        if (this.drops > 0) clearAllReadCaches(this.caches);
        this.markReady();
      },
      onDropped: () => {
        // Messages sent while the connection is down are lost: forget everything they could have changed.
        this.listenerPid = undefined;
        this.drops++;
        clearAllReadCaches(this.caches);
      },
    });
    void this.listener.start();
  }

  private receive(payload: string): void {
    if (!payload) return;
    let message: { n?: string; c?: CacheChange[] };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.n === this.nodeId || !Array.isArray(message.c)) return;
    for (const change of message.c) applyCacheChange(this.caches, change);
    this.applied++;
  }

  /** Sends what is pending, closes the LISTEN connection and stops reconnecting. */
  async stop(): Promise<void> {
    if (this.flushing) {
      clearImmediate(this.flushing);
      this.flush();
    }
    await Promise.all(this.sending);
    this.stopped = true;
    await this.listener?.close();
  }
}

/** The changes as NOTIFY payloads, each under the size limit. */
function payloads(nodeId: string, changes: CacheChange[]): string[] {
  const out: string[] = [];
  let batch: CacheChange[] = [];
  let size = 0;
  for (const change of changes) {
    const length = JSON.stringify(change).length + 1;
    if (batch.length && size + length > MAX_PAYLOAD) {
      out.push(JSON.stringify({ n: nodeId, c: batch }));
      batch = [];
      size = 0;
    }
    batch.push(change);
    size += length;
  }
  if (batch.length) out.push(JSON.stringify({ n: nodeId, c: batch }));
  return out;
}
