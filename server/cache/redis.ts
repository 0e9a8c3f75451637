import { createHash } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';

/*
 * The app's one Redis connection (REDIS_URL, optional): the shared public rate-limit windows and the second-level
 * result cache use it. Redis only ever speeds things up or shares a count; it is never needed to answer, so every
 * command has a short time budget and a caller treats a failure or a late answer as "no Redis" (a local window, a
 * cache miss): a slow or absent Redis never fails or stalls a request.
 *
 * ioredis loads when the first SharedRedis is made, i.e. only when REDIS_URL is set: the default single node never
 * loads it. Commands are not queued while the connection is down (enableOfflineQueue: false): they fail at once and
 * the caller falls back, instead of piling up and running late. ioredis reconnects by itself; the outage and the
 * recovery are logged once each, not once per command.
 */

export interface SharedRedisOptions {
  url: string;
  /** Put before every key (ioredis keyPrefix, also for the keys of scripts): installations or tests sharing one Redis. */
  keyPrefix: string;
  /** Where the outage and recovery notices go. */
  log?: (message: string) => void;
}

/** How long a command waits for the first connection of a starting app before it counts as failed. */
const FIRST_CONNECT_WAIT_MS = 2_000;

export class SharedRedis {
  private readonly connecting: Promise<Redis>;
  /** The first connection attempt: ready, or its error. */
  private firstAttempt!: Promise<void>;
  private down = false;
  private closed = false;
  private readonly log: (message: string) => void;

  constructor(private readonly options: SharedRedisOptions) {
    this.log = options.log ?? ((m) => console.warn(`[redis] ${m}`));
    this.connecting = this.connect();
    // A failed import is reported by the first command; nobody may be waiting yet.
    this.connecting.catch(() => undefined);
  }

  private async connect(): Promise<Redis> {
    const { Redis } = await import('ioredis');
    const options: RedisOptions = {
      keyPrefix: this.options.keyPrefix,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      // Forever, at most every 2 s: Redis coming back is picked up without a restart.
      retryStrategy: (times) => Math.min(times * 100, 2_000),
    };
    const client = new Redis(this.options.url, options);
    this.firstAttempt = new Promise((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
    });
    this.firstAttempt.catch(() => undefined); // nobody may be waiting
    client.on('ready', () => this.answered());
    // Without a listener ioredis prints every reconnection failure; one notice per outage is enough.
    client.on('error', (e: Error) => this.failed(e));
    return client;
  }

  /** Ends an outage (a reconnection, or an answer after commands timed out). */
  private answered(): void {
    if (this.down && !this.closed) this.log('reachable again: shared rate-limit windows and result cache are back');
    this.down = false;
  }

  /** Reports an outage once: rate limits fall back to this node's windows, the result cache to this node's. */
  failed(e: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    const why = e instanceof Error ? e.message : String(e);
    this.log(`unreachable (${why}): this node counts public calls alone and reads no shared results until it is back`);
  }

  /**
   * Runs `fn` on the client within `ms`; rejects when Redis is down, still connecting after FIRST_CONNECT_WAIT_MS,
   * or late. A command that timed out may still complete in Redis.
   */
  async command<T>(ms: number, fn: (client: Redis) => Promise<T>): Promise<T> {
    const client = await this.connecting;
    if (client.status !== 'ready') {
      // A starting app waits for its first connection (briefly); later, a lost one fails at once.
      if (client.status === 'end' || this.down) throw new Error(`redis ${client.status}`);
      await withinTime(FIRST_CONNECT_WAIT_MS, this.firstAttempt);
    }
    const answer = await withinTime(ms, fn(client));
    if (this.down) this.answered();
    return answer;
  }

  /**
   * A Lua script Redis runs atomically (EVALSHA, EVAL when Redis does not know it yet); its keys get the key prefix
   * like every other key.
   */
  script(lua: string, numberOfKeys: number) {
    const name = `script_${createHash('sha1').update(lua).digest('hex').slice(0, 16)}`;
    return (ms: number, keys: string[], args: (string | number)[]): Promise<unknown> =>
      this.command(ms, (client) => {
        if (!(name in client)) client.defineCommand(name, { numberOfKeys, lua });
        const run = (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name];
        return run.call(client, ...keys, ...args);
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = await this.connecting.catch(() => undefined);
    if (!client) return;
    // QUIT lets replies in flight arrive; a Redis that is down gets no goodbye.
    if (client.status === 'ready') await withinTime(1_000, client.quit()).catch(() => client.disconnect());
    else client.disconnect();
  }
}

/**
 * The promise's value if it settles within `ms`. When the timer fires, the answer gets one more turn of the event
 * loop (setImmediate runs after the I/O poll): a reply that arrived while the loop was busy is still taken, instead of
 * losing to a timer that only fired late for the same reason.
 */
function withinTime<T>(ms: number, p: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new Error(`redis: no answer within ${ms} ms`));
        }),
      ms,
    );
    timer.unref();
    p.then(
      (v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** The app's Redis when REDIS_URL is set; nothing (and ioredis never loaded) otherwise. */
export function openSharedRedis(config: { redisUrl?: string; redisKeyPrefix: string }): SharedRedis | undefined {
  if (!config.redisUrl) return undefined;
  return new SharedRedis({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix });
}
