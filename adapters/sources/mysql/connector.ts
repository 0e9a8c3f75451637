import mysql from 'mysql2/promise';
import type { Readable } from 'node:stream';
import { ConnectorBase } from '../connector-base';
import { authError, connectionError, errorCode, errorMessage, isNetworkError } from '../driver-errors';
import { budgetedSocket } from '../budgeted-socket';
import { describeServer, Endpoint } from '../endpoint';
import { RunControl } from '../run-control';
import { splitStatements } from '../split-statements';
import type {
  ColumnInfo,
  ConnectorOptions,
  QueryOptions,
  ResultColumn,
  RowStream,
  SourceSettings,
  TableInfo,
} from '../types';
import { ConnectorError } from '../types';
import { mysqlCatalogPrimitive, mysqlResultType, type MysqlField } from './types';

const DEFAULT_PORT = 3306;
const SYSTEM_SCHEMAS = ['information_schema', 'mysql', 'performance_schema', 'sys'];
/** Rows buffered ahead of the consumer before the socket is paused. */
const STREAM_BUFFER_ROWS = 1000;
/**
 * What a READ ONLY transaction does not stop: SELECT ... INTO OUTFILE / DUMPFILE write server files, and dynamic SQL
 * (PREPARE / EXECUTE [IMMEDIATE]) could assemble such a statement. Under QueryOptions.readOnly a text that contains
 * one of these words anywhere (also inside a /*! ... *\/ comment, which MySQL executes) is refused.
 */
const WRITES_DESPITE_READ_ONLY = /\b(outfile|dumpfile|prepare|execute)\b/i;

/** A pooled session as this connector last set it (MysqlConnector.sessions). */
interface SessionState {
  /** The transaction access mode; undefined when a statement we did not write may have changed it. */
  readOnly?: boolean;
  /** sql_select_limit: a number, null for the server's default, undefined when unknown. */
  limit?: number | null;
}

// mysql2's callback-style connection under the promise wrapper: the only one that can stream a result.
interface CoreConnection {
  on(event: 'error', listener: (err: Error) => void): void;
  off(event: 'error', listener: (err: Error) => void): void;
  query(options: { sql: string; values?: unknown[]; rowsAsArray: boolean }): {
    stream(o: { highWaterMark: number }): Readable;
  };
}

export class MysqlConnector extends ConnectorBase {
  readonly kind = 'mysql' as const;
  readonly dialect = 'mysql' as const;
  private readonly endpoint: Endpoint;
  private pool: Promise<mysql.Pool> | undefined;
  private readonly initialised = new WeakSet<object>();
  /** Connections whose session makes transactions read-only by itself (server default or initial_sql): kept so. */
  private readonly readOnlySessions = new WeakSet<object>();
  /**
   * What each pooled connection's session was last set to (acquire): the transaction access mode and
   * sql_select_limit stay as the last use left them, and are set again only when a use needs otherwise. A widget
   * read on a connection the last read left so is START TRANSACTION READ ONLY, the statement and ROLLBACK: three
   * round trips, not seven (setting and resetting both around every read).
   */
  private readonly sessions = new WeakMap<object, SessionState>();

  constructor(settings: SourceSettings, options?: ConnectorOptions) {
    super(settings, options);
    this.endpoint = new Endpoint(settings, settings.port ?? DEFAULT_PORT, this.connectTimeoutMs, this.lookup);
  }

  private get server(): string {
    return describeServer(this.settings, this.settings.port ?? DEFAULT_PORT);
  }

  async check(): Promise<void> {
    const conn = await this.acquire();
    try {
      await conn.query('SELECT 1');
      conn.release();
    } catch (err) {
      conn.destroy();
      throw this.mapError(err);
    }
  }

  async listSchemas(): Promise<string[]> {
    const rows = await this.catalog(
      `SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT IN (?) ORDER BY schema_name`,
      [SYSTEM_SCHEMAS],
    );
    return rows.map((r) => String(r[0]));
  }

  async listTables(schema: string): Promise<TableInfo[]> {
    const rows = await this.catalog(
      `SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name`,
      [schema],
    );
    return rows.map((r) => ({
      schema,
      name: String(r[0]),
      kind: String(r[1]).toUpperCase().includes('VIEW') ? 'view' : 'table',
    }));
  }

  async listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    const rows = await this.catalog(
      `SELECT column_name, column_type, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`,
      [schema, table],
    );
    if (rows.length === 0) {
      const found = await this.catalog(
        `SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?`,
        [schema, table],
      );
      if (found.length === 0) throw new ConnectorError(`Таблица «${schema}.${table}» не найдена`, 'query');
    }
    return rows.map((r) => ({
      name: String(r[0]),
      db_type: String(r[1]),
      primitive_type: mysqlCatalogPrimitive(String(r[2]), String(r[1])),
      nullable: String(r[3]).toUpperCase() === 'YES',
    }));
  }

  /**
   * Under `readOnly` the session's transactions are made read-only and the statement runs inside START TRANSACTION
   * READ ONLY, ended by ROLLBACK. The session setting matters: DDL commits the open transaction implicitly and would
   * then run in a new one, which the session setting keeps read-only too. The transaction is ended before the
   * connection goes back to the pool; the session setting and the row limit are undone by the next use that needs
   * them otherwise (acquire), before it runs anything (a session that was read-only by itself stays so).
   */
  async openStream(sql: string, params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    this.assertOpen();
    const readOnly = opts.readOnly === true;
    const control = new RunControl(opts);
    let conn: mysql.PoolConnection | undefined;
    const limit = opts.limit === undefined ? undefined : Math.max(0, Math.floor(opts.limit));
    const limited = limit !== undefined;
    let inTransaction = false;
    let finished = false;
    let released = false;
    const release = async () => {
      if (released || !conn) return;
      released = true;
      control.dispose();
      if (!finished) {
        // Unread rows are still on the wire: the connection cannot go back to the pool.
        const threadId = conn.threadId;
        conn.destroy();
        void this.killQuery(threadId).catch(() => {});
        return;
      }
      try {
        if (inTransaction) await conn.query('ROLLBACK');
        // A statement we did not write (a SQL object, the SQL console) may have changed the session (SET SESSION ...):
        // the next use sets both again. The compiler's own SELECT cannot.
        if (!opts.compiledText) this.sessions.set(sessionKey(conn), {});
        conn.release();
      } catch {
        conn.destroy();
      }
    };
    try {
      control.throwIfStopped();
      if (readOnly) {
        const word = WRITES_DESPITE_READ_ONLY.exec(sql)?.[1];
        if (word) throw new ConnectorError(`${word.toUpperCase()} не выполняется в режиме только для чтения`, 'query');
      }
      // The row limit: the server stops top-level SELECTs itself; the connection stays reusable (no half-read result).
      conn = await this.acquire({ readOnly, limit });
      const threadId = conn.threadId;
      control.onCancel(() => (released ? undefined : this.killQuery(threadId)));
      if (readOnly) {
        // The flag first: a failure half-way is still undone by release().
        inTransaction = true;
        await conn.query('START TRANSACTION READ ONLY');
      }
      const core = (conn as unknown as { connection: CoreConnection }).connection;
      // A lost connection is reported to the connection only, never to a streaming query (mysql2 even reports a
      // query sent on an already dead connection that way, synchronously): end the stream with it, or the reader
      // waits forever.
      let lostError: Error | undefined;
      let readable: Readable | undefined;
      const onLost = (err: Error) => {
        lostError ??= err;
        readable?.destroy(err);
      };
      core.on('error', onLost);
      readable = core
        .query({ sql, values: params.length ? params : undefined, rowsAsArray: true })
        .stream({ highWaterMark: STREAM_BUFFER_ROWS });
      // Errors reach the reader through the iterator; an unread stream must not crash the process.
      readable.on('error', () => {});
      readable.once('close', () => core.off('error', onLost));
      if (lostError) readable.destroy(lostError);
      const fields = await firstFields(readable);
      const types = (fields ?? []).map(mysqlResultType);
      const columns: ResultColumn[] = (fields ?? []).map((f, i) => ({
        name: f.name,
        db_type: types[i].dbType,
        primitive_type: types[i].primitive,
        ...(types[i].dbType.startsWith('decimal') && f.decimals !== undefined ? { scale: f.decimals } : {}),
      }));
      const converters = types.map((t) => t.convert);
      const iterator = readable[Symbol.asyncIterator]();
      const self = this;
      let closing: Promise<void> | undefined;
      const close = () =>
        (closing ??= (async () => {
          if (!finished && limited && !control.reason) finished = await drain(iterator, STREAM_BUFFER_ROWS);
          readable.destroy();
          await release();
        })());
      return {
        columns,
        close,
        async *[Symbol.asyncIterator]() {
          let seen = 0;
          try {
            while (opts.limit === undefined || seen < opts.limit) {
              let step: IteratorResult<unknown>;
              try {
                step = await iterator.next();
              } catch (err) {
                finished = endsCommand(err);
                throw control.error(err, (e) => self.mapError(e));
              }
              if (step.done) {
                finished = true;
                break;
              }
              // OK packets of DML / CALL arrive as objects, not rows.
              if (!Array.isArray(step.value)) continue;
              seen++;
              const row = step.value as unknown[];
              yield row.map((v, i) => converters[i](v));
            }
          } finally {
            await close();
          }
        },
      };
    } catch (err) {
      finished = endsCommand(err);
      await release();
      control.dispose();
      throw control.error(err, (e) => this.mapError(e));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await (await pool.catch(() => undefined))?.end().catch(() => {});
    await this.endpoint.close();
  }

  private async connectionOptions(): Promise<mysql.PoolOptions> {
    const s = this.settings;
    await this.guardHosts();
    const at = await this.endpoint.resolve();
    const ssl = s.ssl?.enabled
      ? {
          rejectUnauthorized: s.ssl.reject_unauthorized ?? true,
          ca: s.ssl.ca || undefined,
          cert: s.ssl.cert || undefined,
          key: s.ssl.key || undefined,
        }
      : undefined;
    return {
      host: at.host,
      port: at.port,
      user: s.username,
      password: s.password ?? '',
      database: s.db || undefined,
      ssl,
      connectTimeout: this.connectTimeoutMs,
      connectionLimit: this.poolSize,
      maxIdle: this.poolSize,
      idleTimeout: this.idleTimeoutMs,
      enableKeepAlive: true,
      charset: 'utf8mb4',
      // Values stay as the server's text; types.ts normalises them like every other kind.
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      decimalNumbers: false,
      jsonStrings: true,
      multipleStatements: false,
    };
  }

  private getPool(): Promise<mysql.Pool> {
    if (!this.pool) {
      const creating = this.connectionOptions().then((o) => {
        // Every physical connection takes a slot of the process's connection budget (connection-budget.ts).
        const port = this.settings.port ?? DEFAULT_PORT;
        const pool = mysql.createPool({
          ...o,
          stream: () => budgetedSocket(o.host!, o.port!, () => this.takeConnectionSlot(port), this.lookup),
        });
        // mysql2 listens for a pooled connection's first error only (to drop it from the pool); a later one, e.g. a
        // command sent on it after the server hung up, would be unhandled. The command's caller sees its own failure.
        pool.on('connection', (c) => (c as unknown as CoreConnection).on('error', () => {}));
        return pool;
      });
      this.pool = creating;
      creating.catch(() => {
        if (this.pool === creating) this.pool = undefined;
      });
    }
    return this.pool;
  }

  /**
   * A pooled connection whose session is set up: UTC time zone (so TIMESTAMP text is UTC, see values.ts),
   * then initial_sql, statement by statement (multipleStatements stays off for user queries); then the use's
   * transaction access mode (`readOnly`; undefined: either, for the catalog's own reads) and row limit (none by
   * default), each set only when the session is not so already.
   */
  private async acquire(use: { readOnly?: boolean; limit?: number } = {}): Promise<mysql.PoolConnection> {
    this.assertOpen();
    let conn: mysql.PoolConnection;
    try {
      conn = await (await this.getPool()).getConnection();
    } catch (err) {
      throw this.mapError(err, true);
    }
    const key = sessionKey(conn);
    if (!this.initialised.has(key)) {
      try {
        await conn.query(`SET time_zone = '+00:00'`);
      } catch (err) {
        conn.destroy();
        throw this.mapError(err);
      }
      for (const stmt of splitStatements(this.settings.initial_sql ?? '')) {
        try {
          await conn.query(stmt);
        } catch (err) {
          conn.destroy();
          const e = this.mapError(err);
          throw new ConnectorError(
            `Ошибка в начальном SQL (initial_sql): ${e.message}`,
            e.kind === 'query' ? 'settings' : e.kind,
            { cause: err },
          );
        }
      }
      try {
        // MariaDB (before 11.1) names it tx_read_only, MySQL 8 transaction_read_only; SHOW finds either.
        const [vars] = await conn.query({
          sql: `SHOW SESSION VARIABLES WHERE Variable_name IN ('tx_read_only', 'transaction_read_only')`,
          rowsAsArray: true,
        });
        if ((vars as unknown[][]).some((v) => /^(on|1)$/i.test(String(v[1])))) this.readOnlySessions.add(key);
      } catch (err) {
        conn.destroy();
        throw this.mapError(err);
      }
      this.initialised.add(key);
      // The limit is unknown until set: initial_sql may have set one.
      this.sessions.set(key, { readOnly: this.readOnlySessions.has(key), limit: undefined });
    }
    await this.prepareSession(conn, key, use);
    return conn;
  }

  /** Sets what the use needs and the session has not (sessions). A failure leaves the session unknown: destroyed. */
  private async prepareSession(
    conn: mysql.PoolConnection,
    key: object,
    use: { readOnly?: boolean; limit?: number },
  ): Promise<void> {
    const state = this.sessions.get(key);
    try {
      if (!state) throw new Error('the pooled connection has no recorded session state');
      if (use.readOnly === true && state.readOnly !== true) {
        await conn.query('SET SESSION TRANSACTION READ ONLY');
        state.readOnly = true;
      } else if (use.readOnly === false && state.readOnly !== false && !this.readOnlySessions.has(key)) {
        await conn.query('SET SESSION TRANSACTION READ WRITE');
        state.readOnly = false;
      }
      const limit = use.limit ?? null;
      if (state.limit !== limit) {
        await conn.query(`SET SESSION sql_select_limit = ${limit === null ? 'DEFAULT' : limit}`);
        state.limit = limit;
      }
    } catch (err) {
      conn.destroy();
      throw this.mapError(err);
    }
  }

  private async catalog(sql: string, values: unknown[]): Promise<unknown[][]> {
    const conn = await this.acquire();
    try {
      const [rows] = await conn.query({ sql, values, rowsAsArray: true });
      conn.release();
      return rows as unknown[][];
    } catch (err) {
      const e = this.mapError(err);
      if (e.kind === 'connection') conn.destroy();
      else conn.release();
      throw e;
    }
  }

  /** KILL QUERY from a separate connection: the running one is busy until its statement ends. */
  private async killQuery(threadId: number): Promise<void> {
    const { connectionLimit: _l, maxIdle: _m, idleTimeout: _i, ...options } = await this.connectionOptions();
    const c = await mysql.createConnection(options);
    try {
      await c.query(`KILL QUERY ${Number(threadId)}`);
    } finally {
      await c.end().catch(() => c.destroy());
    }
  }

  private mapError(err: unknown, connecting = false): ConnectorError {
    if (err instanceof ConnectorError) return err;
    // The server's own error numbers are positive; Node's socket errors carry negative ones (ECONNREFUSED is -111).
    const rawErrno = (err as { errno?: number } | null)?.errno;
    const errno = typeof rawErrno === 'number' && rawErrno > 0 ? rawErrno : undefined;
    const code = errorCode(err);
    const message = errorMessage(err);
    const make = (kind: ConnectorError['kind']) =>
      new ConnectorError(message, kind, { cause: err, code: errno === undefined ? undefined : String(errno) });
    if (errno === 1045 || errno === 1044 || errno === 1698 || code === 'ER_ACCESS_DENIED_ERROR')
      return authError(this.server, err, String(errno));
    if (errno === 1317) return make('cancelled');
    if (errno === 3024 || errno === 1969) return make('timeout');
    if (errno === 1049 || errno === 1040 || errno === 1129 || errno === 1130) return make('connection');
    if (
      errno === undefined &&
      (connecting || isNetworkError(err) || code?.startsWith('PROTOCOL_') || code?.startsWith('HANDSHAKE_'))
    ) {
      return connectionError(this.server, err, { product: 'MySQL', timeoutMs: this.connectTimeoutMs });
    }
    return make('query');
  }
}

/** The pooled connection's underlying connection: the same object for as long as its session lives. */
const sessionKey = (conn: mysql.PoolConnection): object => (conn as unknown as { connection: object }).connection;

/**
 * A server error (bad SQL, KILL QUERY) ends the command cleanly: the connection can be reused. Network and
 * protocol failures are `fatal` in mysql2 and leave it unusable.
 */
function endsCommand(err: unknown): boolean {
  const e = err as { errno?: unknown; fatal?: boolean } | null;
  return typeof e?.errno === 'number' && !e.fatal;
}

/**
 * Reads what is left of a result cut by sql_select_limit (at most a buffer's worth), so the connection can go
 * back to the pool; false when more is left (then the connection is dropped instead).
 */
async function drain(iterator: AsyncIterator<unknown>, max: number): Promise<boolean> {
  try {
    for (let i = 0; i <= max; i++) {
      if ((await iterator.next()).done) return true;
    }
  } catch {
    // a failed result leaves the connection in an unknown state
  }
  return false;
}

/** Waits for the result's column definitions; DML answers with `undefined` fields. */
function firstFields(readable: Readable): Promise<MysqlField[] | undefined> {
  return new Promise((resolve, reject) => {
    const onFields = (fields: MysqlField[] | undefined) => {
      cleanup();
      resolve(fields);
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const cleanup = () => {
      readable.off('fields', onFields);
      readable.off('error', onError);
      readable.off('end', onEnd);
    };
    readable.on('fields', onFields);
    readable.on('error', onError);
    readable.on('end', onEnd);
  });
}
