import type { LookupFunction } from 'node:net';
import type {
  ColumnInfo,
  Connector,
  ConnectorOptions,
  Dialect,
  QueryOptions,
  QueryResult,
  RowStream,
  SourceKind,
  SourceSettings,
  TableInfo,
} from './types';
import { budgetServerKey, sourceConnectionBudget } from './connection-budget';
import { checkSourceHosts, pinnedLookup, type CheckedAddresses } from './host-guard';
import { ConnectorError, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_POOL_SIZE } from './types';

/**
 * query() and stream() are the same thing in every kind: read an open row stream, either up to limit + 1 rows
 * (to know `truncated`) or to the end. Connectors implement openStream() only.
 */
export abstract class ConnectorBase implements Connector {
  abstract readonly kind: SourceKind;
  abstract readonly dialect: Dialect;
  protected readonly connectTimeoutMs: number;
  protected readonly poolSize: number;
  protected readonly idleTimeoutMs: number;
  private readonly checkHost: ConnectorOptions['checkHost'];
  private readonly budgetOwner: object | undefined;
  /** What the policy approved at the latest check: new sockets connect to these addresses only. */
  private checked: CheckedAddresses = new Map();
  /** The `lookup` every socket of this connector (SSH server, database server) resolves its host name with. */
  protected readonly lookup: LookupFunction = pinnedLookup(() => this.checked);
  protected closed = false;

  constructor(
    protected readonly settings: SourceSettings,
    options: ConnectorOptions = {},
  ) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    // A pool larger than the server's share of the budget would wait for a slot while its own connection idles.
    this.poolSize = Math.max(
      1,
      Math.min(options.poolSize ?? DEFAULT_POOL_SIZE, sourceConnectionBudget.current.perServer),
    );
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.checkHost = options.checkHost;
    this.budgetOwner = options.budgetOwner;
  }

  /**
   * A slot in the process's connection budget for one physical connection to the server at `port` (the policy is
   * asked first); call the returned function when that connection closes. The wait for a slot ends before the
   * driver's own connect timeout, so a full budget reads as such and not as an unreachable server.
   */
  protected async takeConnectionSlot(port: number): Promise<() => void> {
    await this.guardHosts();
    const server = budgetServerKey(this.settings, port);
    return sourceConnectionBudget.acquire(server, {
      owner: this.budgetOwner,
      maxWaitMs: Math.max(0, this.connectTimeoutMs - 500),
    });
  }

  /**
   * Asks the platform's network policy about the SSH server and the database host; call before connecting. The
   * addresses it approved are what `lookup` answers from then on.
   */
  protected async guardHosts(): Promise<void> {
    if (this.checkHost) this.checked = await checkSourceHosts(this.settings, this.checkHost);
  }

  abstract check(): Promise<void>;
  abstract listSchemas(): Promise<string[]>;
  abstract listTables(schema: string): Promise<TableInfo[]>;
  abstract listColumns(schema: string, table: string): Promise<ColumnInfo[]>;
  abstract openStream(sql: string, params: unknown[], opts?: QueryOptions): Promise<RowStream>;
  abstract close(): Promise<void>;

  async query(sql: string, params: unknown[], opts: QueryOptions = {}): Promise<QueryResult> {
    const limit = opts.limit;
    const stream = await this.openStream(sql, params, { ...opts, limit: limit === undefined ? undefined : limit + 1 });
    // A bounded read answered in one trip (PostgreSQL): the rows are in hand, with no stream to read them through.
    const whole = stream.whole;
    if (whole) {
      const truncated = limit !== undefined && whole.length > limit;
      return { columns: stream.columns, rows: truncated ? whole.slice(0, limit) : whole, truncated };
    }
    const rows: unknown[][] = [];
    let truncated = false;
    try {
      read: for await (const batch of stream.batches?.() ?? oneByOne(stream)) {
        for (const row of batch) {
          if (limit !== undefined && rows.length >= limit) {
            truncated = true;
            break read;
          }
          rows.push(row);
        }
      }
    } finally {
      await stream.close();
    }
    return { columns: stream.columns, rows, truncated };
  }

  async *stream(sql: string, params: unknown[], opts: QueryOptions = {}): AsyncIterable<unknown[]> {
    const stream = await this.openStream(sql, params, opts);
    try {
      yield* stream;
    } finally {
      await stream.close();
    }
  }

  protected assertOpen(): void {
    if (this.closed) throw new ConnectorError('Подключение к источнику закрыто', 'connection');
  }

  protected assertNoParams(params: unknown[]): void {
    if (params.length > 0) {
      throw new ConnectorError(
        'Этот источник не принимает параметры запроса: значения должны быть в тексте SQL',
        'query',
      );
    }
  }
}

/** A stream without batches, as batches of one row. */
async function* oneByOne(rows: AsyncIterable<unknown[]>): AsyncGenerator<unknown[][]> {
  for await (const row of rows) yield [row];
}

/** A RowStream over a batch source: `next()` gives the next batch, or null at the end. */
export function batchRowStream(
  columns: RowStream['columns'],
  next: () => Promise<unknown[][] | null>,
  close: () => Promise<void>,
  limit?: number,
): RowStream {
  let closing: Promise<void> | undefined;
  const doClose = () => (closing ??= close());
  /** The batches up to `limit` rows (the last one cut to it), then closed. */
  async function* batches(): AsyncGenerator<unknown[][]> {
    let seen = 0;
    try {
      while (limit === undefined || seen < limit) {
        let batch = await next();
        if (!batch) break;
        if (limit !== undefined && seen + batch.length > limit) batch = batch.slice(0, limit - seen);
        seen += batch.length;
        yield batch;
      }
    } finally {
      await doClose();
    }
  }
  return {
    columns,
    close: doClose,
    batches,
    async *[Symbol.asyncIterator]() {
      for await (const batch of batches()) yield* batch;
    },
  };
}

/** A RowStream over rows already read whole (the connection released), up to `limit` of them (RowStream.whole). */
export function wholeRowStream(columns: RowStream['columns'], rows: unknown[][], limit?: number): RowStream {
  const whole = limit !== undefined && rows.length > limit ? rows.slice(0, limit) : rows;
  let left: unknown[][] | null = whole;
  const stream = batchRowStream(
    columns,
    async () => {
      const r = left;
      left = null;
      return r;
    },
    async () => {},
  );
  return { ...stream, whole };
}

export function quoteIdent(name: string, quote = '"'): string {
  return quote + name.split(quote).join(quote + quote) + quote;
}
