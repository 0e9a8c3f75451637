import { createHash } from 'node:crypto';
import { sourceConnectionBudget } from './connection-budget';
import { createConnector } from './create-connector';
import {
  ConnectorError,
  type ColumnInfo,
  type Connector,
  type ConnectorOptions,
  type Dialect,
  type QueryOptions,
  type QueryResult,
  type RowStream,
  type SourceKind,
  type SourceSettings,
  type TableInfo,
} from './types';

interface Entry {
  hash: string;
  /** The objects the hash was computed from: the same objects again (a caller that keeps its settings) skip it. */
  settings: SourceSettings;
  options: ConnectorOptions | undefined;
  kind: SourceKind;
  /** The driver a saved source's connector was built with; none for the platform's own files (extracts). */
  driverId?: string;
  connector: PooledConnector;
}

/**
 * The driver that builds a saved source's connector: the bundled one of the kind (no `create`), or an uploaded
 * plugin's factory. Its id is part of the cache key, so a switch of driver never reuses the other driver's pool.
 */
export interface ConnectorDriver {
  id: string;
  create?: (settings: SourceSettings, options: ConnectorOptions) => Connector;
}

/**
 * A saved source's connector as the cache hands it out: it knows whether a call is running on it and when it was
 * last used, so that the connection budget can close its pool when idle (least recently used first) without
 * breaking whoever holds it: the next call opens a new pool.
 */
class PooledConnector implements Connector {
  readonly kind: SourceKind;
  readonly dialect: Dialect;
  private inner: Connector | undefined;
  private running = 0;
  private closed = false;
  private retiring = false;
  lastUsed = Date.now();

  constructor(private readonly create: (owner: object) => Connector) {
    this.inner = create(this);
    this.kind = this.inner.kind;
    this.dialect = this.inner.dialect;
  }

  get idle(): boolean {
    return this.running === 0 && this.inner !== undefined;
  }

  /** Closes the pool if no call is running on it; the connector stays usable. */
  async closeIfIdle(): Promise<boolean> {
    if (!this.idle) return false;
    const inner = this.inner!;
    this.inner = undefined;
    await inner.close().catch(() => undefined);
    return true;
  }

  check(): Promise<void> {
    return this.run((c) => c.check());
  }

  listSchemas(): Promise<string[]> {
    return this.run((c) => c.listSchemas());
  }

  listTables(schema: string): Promise<TableInfo[]> {
    return this.run((c) => c.listTables(schema));
  }

  listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    return this.run((c) => c.listColumns(schema, table));
  }

  query(sql: string, params: unknown[], opts?: QueryOptions): Promise<QueryResult> {
    return this.run((c) => c.query(sql, params, opts));
  }

  async *stream(sql: string, params: unknown[], opts?: QueryOptions): AsyncIterable<unknown[]> {
    const stream = await this.openStream(sql, params, opts);
    try {
      yield* stream;
    } finally {
      await stream.close();
    }
  }

  /** Only where the connector has it (PostgreSQL); counts as running until the copy ends. */
  get copyCsv(): Connector['copyCsv'] {
    const inner = this.current();
    if (!inner.copyCsv) return undefined;
    return (select, out, opts) => this.run((c) => c.copyCsv!(select, out, opts));
  }

  /** The stream counts as running until it is closed or read to the end. */
  async openStream(sql: string, params: unknown[], opts?: QueryOptions): Promise<RowStream> {
    const done = this.begin();
    let inner: RowStream;
    try {
      inner = await this.current().openStream(sql, params, opts);
    } catch (err) {
      done();
      throw err;
    }
    return {
      columns: inner.columns,
      close: async () => {
        try {
          await inner.close();
        } finally {
          done();
        }
      },
      async *[Symbol.asyncIterator]() {
        try {
          yield* inner;
        } finally {
          done();
        }
      },
    };
  }

  /** Closed once no call is running on it (at once when idle): for a pool whose driver was switched away from. */
  async retire(): Promise<void> {
    this.retiring = true;
    if (this.running === 0) await this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    const inner = this.inner;
    this.inner = undefined;
    await inner?.close();
  }

  private current(): Connector {
    if (this.closed) throw new ConnectorError('Подключение к источнику закрыто', 'connection');
    return (this.inner ??= this.create(this));
  }

  private begin(): () => void {
    this.running++;
    this.lastUsed = Date.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.lastUsed = Date.now();
      if (this.retiring && this.running === 0) void this.close().catch(() => undefined);
    };
  }

  private async run<T>(fn: (c: Connector) => Promise<T>): Promise<T> {
    const done = this.begin();
    try {
      return await fn(this.current());
    } finally {
      done();
    }
  }
}

/**
 * One connector (and so one connection pool, one SSH tunnel) per saved source: an app holds one (deps.connectors)
 * and closes it with itself. The connections of all caches in the process count against the one process budget.
 */
export class ConnectorCache {
  private readonly entries = new Map<string | number, Entry>();

  /**
   * The source's connector, reused while its kind and settings stay the same; a changed settings hash (for
   * example after an edit or a pipeline substitution) closes the old pool and starts a new one.
   */
  get(
    sourceId: string | number,
    kind: SourceKind,
    settings: SourceSettings,
    options?: ConnectorOptions,
    driver?: ConnectorDriver,
  ): Connector {
    const cached = this.entries.get(sourceId);
    // Settings objects are never changed once made: the same objects as last time are the same settings.
    if (
      cached &&
      cached.settings === settings &&
      cached.options === options &&
      cached.kind === kind &&
      cached.driverId === driver?.id
    )
      return cached.connector;
    const hash = settingsHash(kind, settings, options, driver?.id);
    if (cached?.hash === hash) {
      cached.settings = settings;
      cached.options = options;
      return cached.connector;
    }
    if (cached) void cached.connector.close().catch(() => {});
    const build = driver?.create ?? ((s: SourceSettings, o: ConnectorOptions) => createConnector(kind, s, o));
    const connector = new PooledConnector((owner) => build(settings, { ...options, budgetOwner: owner }));
    this.entries.set(sourceId, { hash, settings, options, kind, driverId: driver?.id, connector });
    return connector;
  }

  /**
   * Drops the saved sources' connectors of a kind whose driver was switched: each pool is closed once the calls
   * running on it end, and the next call builds one with the kind's new driver.
   */
  async releaseKind(kind: SourceKind): Promise<void> {
    const gone = [...this.entries].filter(([, e]) => e.kind === kind && e.driverId !== undefined);
    for (const [id] of gone) this.entries.delete(id);
    await Promise.allSettled(gone.map(([, e]) => e.connector.retire()));
  }

  /** Closes the source's pool (source deleted, or its file replaced). */
  async release(sourceId: string | number): Promise<void> {
    const cached = this.entries.get(sourceId);
    this.entries.delete(sourceId);
    await cached?.connector.close();
  }

  /** Closes every pool: app close, a changed source network policy, test teardown. */
  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(all.map((e) => e.connector.close()));
  }
}

/**
 * Asked by the connection budget when no slot is free: closes the least recently used idle pool among those that
 * hold slots (the budget names them, whichever cache handed them out), so that a source being read now is not
 * refused for one read minutes ago. A pool replaced or released is closed for good and never idle.
 */
sourceConnectionBudget.setEvictor(async (_server, holders) => {
  const idle = [...holders]
    .filter((c): c is PooledConnector => c instanceof PooledConnector && c.idle)
    .sort((a, b) => a.lastUsed - b.lastUsed);
  for (const c of idle) if (await c.closeIfIdle()) return true;
  return false;
});

export function settingsHash(
  kind: SourceKind,
  settings: SourceSettings,
  options?: ConnectorOptions,
  driverId?: string,
): string {
  return createHash('sha256')
    .update(stableJson({ kind, settings, options: options ?? {}, driver: driverId }))
    .digest('hex');
}

/** JSON with sorted keys, so that equal settings hash equally whatever their key order; hooks do not count. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    return `{${Object.keys(obj)
      .filter((k) => obj[k] !== undefined && typeof obj[k] !== 'function')
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
