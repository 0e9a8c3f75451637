import { hash } from 'node:crypto';
import { ConnectorError, type RowStream } from '../../../adapters/sources';
import type { AppDeps } from '../../app/deps';
import { asSourceError } from '../../data-sources/connector-errors';
import { AppError } from '../../kernel/errors';
import { ResultCache, type CachedResult, type ResultCacheOptions } from './result-cache';
import type { ExecutableTarget } from './targets';
import type { CompiledQuery } from '../compile/types';
import { cacheSlot } from '../../kernel/app-caches';
import { SharedResults } from './shared-results';
import { resultCacheHits, resultCacheMisses, sourceKindLabel, sourceQueryDurations } from '../../ops/ops';

/*
 * Runs compiled queries: through the result cache, with identical concurrent requests sharing one execution
 * (single flight), within a time budget. Whatever the database or driver says about a query is the caller's
 * problem to fix (a 400 with the driver's message), never a 500.
 *
 * Cache key: the target's data key (source id + connection settings hash, or extract file + load), the dataset's
 * version (every schema or settings save bumps it), the SQL text and its parameter values. RLS makes the SQL differ
 * per user (its rules are filters of the query, with the reader's attribute values bound), so users never share rows they could not read.
 *
 * With REDIS_URL a miss looks in the shared second level (shared-results.ts) under the same key before it asks the
 * source, and a result read from the source is stored there too: across nodes a result is read from its source once
 * per TTL, not once per node.
 */

export interface QueryEngineOptions extends ResultCacheOptions {
  timeoutMs: number;
}

const DEFAULT_ENGINE_OPTIONS: QueryEngineOptions = {
  ttlMs: 60_000,
  maxBytes: 64 * 1024 * 1024,
  maxEntries: 2_000,
  timeoutMs: 60_000,
};

export interface ExecuteResult extends CachedResult {
  /** Served from the cache or from an execution already under way. */
  cached: boolean;
}

export class QueryEngine {
  readonly cache: ResultCache;
  private readonly running = new Map<string, Promise<{ result: CachedResult; shared: boolean }>>();
  /** Executions actually sent to a database (for tests and monitoring). */
  executions = 0;
  /** Misses of this node's cache answered by the shared one (Redis) instead of a source. */
  sharedHits = 0;

  constructor(
    readonly options: QueryEngineOptions = DEFAULT_ENGINE_OPTIONS,
    /** The second level in Redis (REDIS_URL), if any. */
    readonly shared?: SharedResults,
  ) {
    this.cache = new ResultCache(options);
  }

  async execute(target: ExecutableTarget, query: CompiledQuery, dataVersion: string | number): Promise<ExecuteResult> {
    const key = cacheKey(target.dataKey, dataVersion, query);
    const hit = this.cache.get(key);
    if (hit) {
      resultCacheHits.inc('local');
      return { ...hit, cached: true };
    }
    const pending = this.running.get(key);
    if (pending) {
      resultCacheHits.inc('in_flight');
      return { ...(await pending).result, cached: true };
    }

    const run = this.fill(key, target, query);
    this.running.set(key, run);
    try {
      const { result, shared } = await run;
      return { ...result, cached: shared };
    } finally {
      this.running.delete(key);
    }
  }

  /**
   * This node's cached result of the query on the target's data at that version, if it still holds one (the TTL,
   * the memory budget and clears decide, as for execute); nothing is run. For callers that kept a compiled query
   * and its target's data key from an earlier execute (server/query/read.ts: answers of repeated requests).
   */
  cachedResult(dataKey: string, dataVersion: string | number, query: CompiledQuery): CachedResult | undefined {
    const hit = this.cache.get(cacheKey(dataKey, dataVersion, query));
    if (hit) resultCacheHits.inc('local');
    return hit;
  }

  /** A miss of this node's cache: the shared cache's entry, or the source's answer (then kept at both levels). */
  private async fill(
    key: string,
    target: ExecutableTarget,
    query: CompiledQuery,
  ): Promise<{ result: CachedResult; shared: boolean }> {
    const ttlMs = this.options.ttlMs;
    if (this.shared && ttlMs > 0) {
      const hit = await this.shared.get(key);
      if (hit) {
        this.sharedHits++;
        resultCacheHits.inc('shared');
        this.cache.set(key, hit.value, hit.ttlMs);
        return { result: hit.value, shared: true };
      }
    }
    resultCacheMisses.inc();
    const result = await this.run(target, query);
    this.cache.set(key, result);
    this.shared?.set(key, result, ttlMs);
    return { result, shared: false };
  }

  private async run(target: ExecutableTarget, query: CompiledQuery): Promise<CachedResult> {
    this.executions++;
    const started = performance.now();
    try {
      // Every engine query only reads; a dataset's own SQL objects must not write with the source's credentials.
      const result = await target.run(query.sql, query.params, {
        limit: query.fetchLimit,
        timeoutMs: this.options.timeoutMs,
        readOnly: true,
        compiledText: query.compiledText === true,
      });
      return { rows: result.rows, truncated: result.truncated };
    } catch (e) {
      throw queryFailure(e);
    } finally {
      timeSourceQuery(target, started);
    }
  }
}

export interface StreamRunOptions {
  signal?: AbortSignal;
  /** The whole read's budget; the engine's statement timeout when not given. */
  timeoutMs?: number;
}

/**
 * A compiled query read to its end through the target's cursor (RowStream), rows one by one with bounded memory: not
 * cached and not shared (a stream is read once), read-only, cancelled at the server by the signal or the time budget.
 * Errors, at opening or while reading, answer as execute's do (400 with the driver's words).
 */
export async function streamQuery(
  engine: QueryEngine,
  target: ExecutableTarget,
  query: CompiledQuery,
  opts: StreamRunOptions = {},
): Promise<RowStream> {
  engine.executions++;
  const started = performance.now();
  let stream: RowStream;
  try {
    stream = await target.stream(query.sql, query.params, {
      timeoutMs: opts.timeoutMs ?? engine.options.timeoutMs,
      signal: opts.signal,
      readOnly: true,
    });
  } catch (e) {
    throw queryFailure(e);
  } finally {
    timeSourceQuery(target, started);
  }
  return {
    columns: stream.columns,
    close: () => stream.close(),
    async *[Symbol.asyncIterator]() {
      try {
        yield* stream;
      } catch (e) {
        throw queryFailure(e);
      } finally {
        await stream.close();
      }
    },
  };
}

/** GET /metrics: the source's time for a query, by its kind (server/ops). */
function timeSourceQuery(target: ExecutableTarget, started: number): void {
  sourceQueryDurations.observe([sourceKindLabel(target.dataKey, target.dialect)], (performance.now() - started) / 1000);
}

/*
 * Keys by compiled query: plans are cached (server/query/read.ts), so a repeated request brings the same object
 * back, and its key (the whole SQL and its parameters, hashed when long) is made once per target and data version
 * instead of on every hit. Compiled queries are never changed after compiling; a key dies with its query.
 */
const keysOf = new WeakMap<CompiledQuery, Map<string, string>>();

function cacheKey(dataKey: string, version: string | number, q: CompiledQuery): string {
  let keys = keysOf.get(q);
  if (!keys) keysOf.set(q, (keys = new Map()));
  const where = `${dataKey}\u0000${version}`;
  let key = keys.get(where);
  if (key === undefined) {
    // Only the targets and versions a plan is read on: a handful per plan.
    if (keys.size >= 8) keys.clear();
    keys.set(where, (key = hashKey(dataKey, version, q)));
  }
  return key;
}

/**
 * Keys up to this length are the text itself: hashing one cost a dashboard's miss more than keeping it (a widget's key
 * is a few hundred characters); longer ones (long SQL, IN lists of thousands of values) are their SHA-256, so that
 * keys stay small beside the results the cache's budget counts. A hash is 44 base64 characters without a NUL, so it
 * is never a text key.
 */
const MAX_TEXT_KEY = 1_024;

function hashKey(dataKey: string, version: string | number, q: CompiledQuery): string {
  // The replacer only for parameters that need it: the same key.
  const params = q.params.every(isPlain) ? JSON.stringify(q.params) : JSON.stringify(q.params, typedValue);
  const text = `${dataKey}\u0000${version}\u0000${q.fetchLimit ?? ''}\u0000${q.sql}\u0000${params}`;
  // One-shot hash of one string (no Hash object).
  return text.length <= MAX_TEXT_KEY ? text : hash('sha256', text, 'base64');
}

const isPlain = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

const typedValue = (_k: string, v: unknown) =>
  typeof v === 'bigint' ? `${v}n` : v instanceof Date ? `d:${v.toISOString()}` : v;

/** The database's or driver's own words, as a 400. */
function queryFailure(e: unknown): AppError {
  if (e instanceof AppError) return e;
  // The driver's own error goes along as the cause: logged, while the caller gets the message.
  if (e instanceof ConnectorError) {
    if (e.kind === 'query')
      return new AppError('bad_request', `Ошибка выполнения запроса в источнике данных: ${e.message}`, { cause: e });
    return asSourceError(e) as AppError; // unreachable, busy, refused: as every other source call answers
  }
  const message = e instanceof Error && e.message ? e.message : String(e);
  return new AppError('bad_request', `Ошибка выполнения запроса в источнике данных: ${message}`, { cause: e });
}

/**
 * Runs compiled queries: the result cache and single flight (replaced through configureQueryEngine). Made on first
 * use with the app's deps, for the shared level on the app's Redis.
 */
const engines = cacheSlot('query.engine', (): { engine?: QueryEngine } => ({}));

const newEngine = (deps: AppDeps, options: QueryEngineOptions) =>
  new QueryEngine(options, deps.redis && new SharedResults(deps.redis));

/** The application's engine (one cache per process and application instance). */
export function queryEngineFor(deps: AppDeps): QueryEngine {
  const slot = deps.caches.of(engines);
  return (slot.engine ??= newEngine(deps, DEFAULT_ENGINE_OPTIONS));
}

/** Replaces the application's engine, e.g. to turn the cache off for a benchmark or shorten the timeout in a test. */
export function configureQueryEngine(deps: AppDeps, options: Partial<QueryEngineOptions>): QueryEngine {
  return (deps.caches.of(engines).engine = newEngine(deps, { ...DEFAULT_ENGINE_OPTIONS, ...options }));
}
