// The one contract between the platform and every kind of data source. Wire shapes are snake_case (spec).

export type SourceKind = 'postgresql' | 'mysql' | 'clickhouse' | 'file';
export type Dialect = 'postgresql' | 'mysql' | 'clickhouse' | 'duckdb';
export type PrimitiveType = 'string' | 'integer' | 'float' | 'boolean' | 'date' | 'datetime' | 'unknown';

interface SslSettings {
  enabled: boolean;
  /** Defaults to true: a certificate that does not verify is refused unless the user opts out. */
  reject_unauthorized?: boolean;
  ca?: string;
  cert?: string;
  key?: string;
}

export interface SshTunnelSettings {
  host: string;
  port?: number;
  username: string;
  password?: string;
  private_key?: string;
  passphrase?: string;
}

interface FileSourceSettings {
  /** The DuckDB database file the upload was imported into. */
  duckdb_path: string;
  tables: string[];
}

export interface SourceSettings {
  host?: string;
  port?: number;
  http_port?: number;
  username?: string;
  password?: string;
  db?: string;
  use_ssh?: boolean;
  ssl?: SslSettings;
  ssh_tunnel?: SshTunnelSettings;
  initial_sql?: string;
  file?: FileSourceSettings;
}

export interface ColumnInfo {
  name: string;
  db_type: string;
  primitive_type: PrimitiveType;
  nullable: boolean;
}

export interface TableInfo {
  schema: string;
  name: string;
  kind: 'table' | 'view';
}

export interface QueryOptions {
  /** Rows to return; one more is read to set `truncated`. */
  limit?: number;
  /** Whole-query budget; the server-side query is cancelled when it runs out. */
  timeoutMs?: number;
  /** Aborting cancels the server-side query too. */
  signal?: AbortSignal;
  /**
   * The statement only reads: the server refuses writes for it (PostgreSQL and MySQL: a read-only transaction,
   * rolled back; ClickHouse: readonly = 2; a file source is always opened read-only), and what a read-only
   * transaction would still let through (file writes, COPY, dynamic SQL) is refused by the connector. A refused
   * write fails with kind 'query'. Every read of the query engine and the data browser sets it; the owner's SQL
   * console does not.
   */
  readOnly?: boolean;
  /**
   * The statement is the query compiler's own text (CompiledQuery.compiledText): quoted identifiers, fixed keywords
   * and $n parameters, no SQL a user wrote. The PostgreSQL connector then sends a bounded read-only read as one
   * simple-protocol text, its parameters written in as literals (adapters/sources/postgresql/inline-params.ts); a
   * text not shaped so is sent as any other. The MySQL connector keeps the session's read-only mode and row limit
   * after such a read for the next one (a user's text may change them, so after one they are set again).
   */
  compiledText?: boolean;
}

export interface CopyCsvOptions extends QueryOptions {
  /**
   * Told the result's columns once they are known and before the first byte is written to `out`; the copy waits
   * for it (an extract creates its table and opens its loader here, so loading runs while the source sends).
   */
  onColumns?: (columns: ResultColumn[]) => Promise<void>;
}

export interface ResultColumn {
  name: string;
  db_type: string;
  primitive_type: PrimitiveType;
  /** A DECIMAL result's declared scale, where the protocol says it (MySQL): a rollup keeps sums at that scale. */
  scale?: number;
}

export interface QueryResult {
  columns: ResultColumn[];
  rows: unknown[][];
  truncated: boolean;
}

/** An open result read row by row; `columns` is known before the first row. */
export interface RowStream extends AsyncIterable<unknown[]> {
  readonly columns: ResultColumn[];
  /** Stops reading and cancels what is left on the server; safe to call twice. */
  close(): Promise<void>;
  /**
   * The same rows in the batches the driver delivered them (one await per batch instead of one per row), closing as
   * the row iterator does; where a stream has it, reading whole results (Connector.query) uses it.
   */
  batches?(): AsyncIterable<unknown[][]>;
  /**
   * Every row of the stream (up to its limit) when they were read in one answer and the connection is already back
   * in its pool: a reader of whole results (Connector.query) takes them as they are instead of iterating, and there
   * is nothing left to close.
   */
  readonly whole?: unknown[][];
}

export interface Connector {
  readonly kind: SourceKind;
  readonly dialect: Dialect;
  /** Connects, runs initial_sql and a trivial query; throws ConnectorError with the driver's message. */
  check(): Promise<void>;
  listSchemas(): Promise<string[]>;
  listTables(schema: string): Promise<TableInfo[]>;
  listColumns(schema: string, table: string): Promise<ColumnInfo[]>;
  /**
   * Positional params in the dialect's own placeholder form: $1 (postgresql, duckdb), ? (mysql).
   * ClickHouse takes no params (18.16 has no query_params): the query compiler inlines escaped literals.
   */
  query(sql: string, params: unknown[], opts?: QueryOptions): Promise<QueryResult>;
  /** Rows one by one with bounded memory. */
  stream(sql: string, params: unknown[], opts?: QueryOptions): AsyncIterable<unknown[]>;
  /** Like stream, with the column metadata (needed to create an extract table before the first row). */
  openStream(sql: string, params: unknown[], opts?: QueryOptions): Promise<RowStream>;
  /**
   * PostgreSQL only (undefined elsewhere): the SELECT's rows as CSV in the server's bulk format (COPY ... TO STDOUT),
   * written to `out` with backpressure, read-only; for extracts. NULL is an empty field, an empty text "".
   */
  copyCsv?(
    select: string,
    out: import('node:stream').Writable,
    opts?: CopyCsvOptions,
  ): Promise<{ columns: ResultColumn[]; rows: number }>;
  close(): Promise<void>;
}

/** 'busy': the platform's own connection budget is used up (connection-budget.ts); worth retrying shortly. */
export type ConnectorErrorKind = 'connection' | 'auth' | 'timeout' | 'cancelled' | 'query' | 'settings' | 'busy';

export class ConnectorError extends Error {
  /** The driver's own error code when there is one: SQLSTATE (PostgreSQL), errno (MySQL), Code (ClickHouse). */
  readonly code?: string;

  constructor(
    message: string,
    readonly kind: ConnectorErrorKind,
    options?: { cause?: unknown; code?: string },
  ) {
    super(message, options);
    this.name = 'ConnectorError';
    this.code = options?.code;
  }
}

/** Knobs that are not part of the stored settings (the platform's config decides them). */
export interface ConnectorOptions {
  /** Budget for establishing a connection (TCP, TLS, SSH, auth). Default 5000 ms. */
  connectTimeoutMs?: number;
  /** Connections kept per source. Default 5. */
  poolSize?: number;
  /** Idle pooled connections are closed after this. Default 10000 ms. */
  idleTimeoutMs?: number;
  /**
   * The platform's network policy, asked before the connector opens a socket (SSH tunnel or server); see
   * host-guard.ts. A refusal fails the call with the hook's error. None: every host is allowed. The addresses it
   * returns for a name it resolved are the only ones the connection goes to.
   */
  checkHost?: (host: string, opts: { resolve: boolean }) => Promise<readonly string[] | void>;
  /** Who holds this connector's slots in the connection budget: the pool the budget may ask to close when idle. */
  budgetOwner?: object;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_POOL_SIZE = 5;
export const DEFAULT_IDLE_TIMEOUT_MS = 10_000;
