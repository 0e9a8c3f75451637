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
  connector: PooledConnector;
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
  get(sourceId: string | number, kind: SourceKind, settings: SourceSettings, options?: ConnectorOptions): Connector {
    const hash = settingsHash(kind, settings, options);
    const cached = this.entries.get(sourceId);
    if (cached?.hash === hash) return cached.connector;
    if (cached) void cached.connector.close().catch(() => {});
    const connector = new PooledConnector((owner) =>
      createConnector(kind, settings, { ...options, budgetOwner: owner }),
    );
    this.entries.set(sourceId, { hash, connector });
    return connector;
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

export function settingsHash(kind: SourceKind, settings: SourceSettings, options?: ConnectorOptions): string {
  return createHash('sha256')
    .update(stableJson({ kind, settings, options: options ?? {} }))
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
