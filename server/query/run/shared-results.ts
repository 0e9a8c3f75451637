import { hash } from 'node:crypto';
import v8 from 'node:v8';
import type { SharedRedis } from '../../cache/redis';
import { estimateBytes, type CachedResult } from './result-cache';

/*
 * The second level of the result cache, in Redis (REDIS_URL): a result one node read from a source is answered by
 * every other node until its TTL ends, instead of each node asking the source again. It is keyed exactly as the
 * node's own cache (engine.ts: the target's data key, the dataset's version, the SQL with the reader's row-rule
 * values bound, the parameters), so it can never answer another data version or another reader's rules.
 *
 * Values are V8's structured serialisation (node:v8, no dependency): compact, and it keeps what JSON would change
 * (NaN, ±Infinity, -0). Results over MAX_ENTRY_BYTES stay on their node. Redis is a shortcut, never a wait: a lookup
 * that does not answer within READ_WAIT_MS is a miss, and stores are not awaited.
 */

/** Larger results are not shared: a dashboard's results are small, and big ones would crowd Redis out. */
const MAX_ENTRY_BYTES = 1024 * 1024;
/** A lookup waits this long for Redis, then the source is asked. */
const READ_WAIT_MS = 100;
const WRITE_WAIT_MS = 1_000;
/** The serialisation's version: a node with another format reads a miss, never a wrong value. */
const KEY_PREFIX = 'result:v1:';

/**
 * The Redis key of an engine key: its SHA-256. The engine keeps short keys as their text (the SQL with its parameter
 * values: engine.ts), which has no place in Redis's key space, where SCAN, MONITOR and the slow log show key names;
 * a key the engine hashed already (it has no NUL) is used as it is. Both are what every node wrote before short keys
 * became text, so nodes of either version share entries.
 */
const redisKey = (key: string) => KEY_PREFIX + (key.includes('\u0000') ? hash('sha256', key, 'base64') : key);

export interface SharedHit {
  value: CachedResult;
  /** What remains of the entry's TTL: the node keeps its copy no longer than the writer meant. */
  ttlMs: number;
}

export class SharedResults {
  private readonly writing = new Set<Promise<unknown>>();

  constructor(private readonly redis: SharedRedis) {}

  async get(key: string): Promise<SharedHit | undefined> {
    let answer: [Error | null, unknown][] | null;
    const at = redisKey(key);
    try {
      answer = await this.redis.command(READ_WAIT_MS, (c) => c.pipeline().getBuffer(at).pttl(at).exec());
    } catch (e) {
      this.redis.failed(e);
      return undefined;
    }
    const [[, buffer], [, ttlMs]] = answer ?? [
      [null, null],
      [null, -2],
    ];
    if (!(buffer instanceof Buffer) || typeof ttlMs !== 'number' || ttlMs <= 0) return undefined;
    const value = decode(buffer);
    return value && { value, ttlMs };
  }

  /** Stores in the background; a result too big to share, or a Redis that fails, just leaves the entry out. */
  set(key: string, value: CachedResult, ttlMs: number): void {
    if (ttlMs <= 0) return;
    // The estimate is above the serialised size for the values results hold: a clearly big result is not serialised.
    if (estimateBytes(value.rows) > 4 * MAX_ENTRY_BYTES) return;
    let buffer: Buffer;
    try {
      buffer = v8.serialize({ rows: value.rows, truncated: value.truncated });
    } catch {
      return; // a value V8 cannot clone (none of a source's normalised values): not shared
    }
    if (buffer.length > MAX_ENTRY_BYTES) return;
    const write = this.redis
      .command(WRITE_WAIT_MS, (c) => c.set(redisKey(key), buffer, 'PX', ttlMs))
      .catch((e: unknown) => this.redis.failed(e))
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  /** When the stores under way have ended (tests: another node may then read what this one stored). */
  async flushed(): Promise<void> {
    await Promise.all(this.writing);
  }
}

function decode(buffer: Buffer): CachedResult | undefined {
  try {
    const v = v8.deserialize(buffer) as Partial<CachedResult> | null;
    if (v && Array.isArray(v.rows) && typeof v.truncated === 'boolean') return { rows: v.rows, truncated: v.truncated };
  } catch {
    // written by a node with another format: a miss
  }
  return undefined;
}
