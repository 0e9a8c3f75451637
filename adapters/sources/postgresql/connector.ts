import pg from 'pg';
import type { ConnectionOptions } from 'node:tls';
import type { Socket } from 'node:net';
import { batchRowStream, ConnectorBase, quoteIdent, wholeRowStream } from '../connector-base';
import { socketWithLookup } from '../budgeted-socket';
import { budgetedPgClient } from './budgeted-client';
import { authError, connectionError, DROPPED_MESSAGE, errorCode, errorMessage, isNetworkError } from '../driver-errors';
import { describeServer, Endpoint } from '../endpoint';
import { RunControl } from '../run-control';
import { leadingKeyword, splitStatements } from '../split-statements';
import type {
  CopyCsvOptions,
  ColumnInfo,
  ConnectorOptions,
  QueryOptions,
  ResultColumn,
  RowStream,
  SourceSettings,
  TableInfo,
} from '../types';
import { ConnectorError } from '../types';
import { builtinPgType, pgTypeFromCatalog, pgValueConverter, type PgTypeInfo } from './types';
import { CopyOut } from './copy-out';
import { inlineCompiledParams } from './inline-params';
import { PipelinedReads } from './pipelined-reads';
import type { Writable } from 'node:stream';

const DEFAULT_PORT = 5432;
/** Rows per FETCH: big enough to amortise the round trip, small enough to bound memory. */
const FETCH_SIZE = 2000;
/** Statements a cursor can be declared for; anything else (SHOW, EXPLAIN, DML) runs plainly. */
const CURSOR_STATEMENTS = new Set(['select', 'with', 'values', 'table']);
/**
 * Statements a read-only transaction does not stop: COPY ... TO a server file or PROGRAM, and DO blocks (which can
 * EXECUTE such a COPY). Refused under QueryOptions.readOnly; every other statement is left to the server.
 */
const WRITES_DESPITE_READ_ONLY = new Set(['copy', 'do']);
const SYSTEM_SCHEMAS =
  "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'";

// Every value arrives as the server's text; the connector normalises it itself (see values.ts), so that
// bigint, numeric, dates and timestamps come out the same as from the other kinds.
const RAW_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig;

export class PostgresConnector extends ConnectorBase {
  readonly kind = 'postgresql' as const;
  readonly dialect = 'postgresql' as const;
  private readonly endpoint: Endpoint;
  private pool: Promise<pg.Pool> | undefined;
  /** The pool `pool` made, once made: a read takes a connection from it without awaiting the promise again. */
  private poolMade: pg.Pool | undefined;
  private readonly initialised = new WeakSet<pg.PoolClient>();
  private readonly typeCache = new Map<number, PgTypeInfo>();
  private cursorSeq = 0;
  private readonly pipelined: PipelinedReads;

  constructor(settings: SourceSettings, options?: ConnectorOptions) {
    super(settings, options);
    this.endpoint = new Endpoint(settings, settings.port ?? DEFAULT_PORT, this.connectTimeoutMs, this.lookup);
    this.pipelined = new PipelinedReads(
      () => this.acquire(),
      this.poolSize,
      (pid) => this.cancelBackend(pid),
    );
  }

  private get server(): string {
    return describeServer(this.settings, this.settings.port ?? DEFAULT_PORT);
  }

  async check(): Promise<void> {
    const client = await this.acquire();
    try {
      await client.query('SELECT 1');
    } catch (err) {
      client.release(true);
      throw this.mapError(err);
    }
    client.release();
  }

  async listSchemas(): Promise<string[]> {
    const rows = await this.catalog<{ nspname: string }>(
      `SELECT n.nspname FROM pg_namespace n WHERE ${SYSTEM_SCHEMAS} ORDER BY n.nspname`,
      [],
    );
    return rows.map((r) => r.nspname);
  }

  async listTables(schema: string): Promise<TableInfo[]> {
    const rows = await this.catalog<{ relname: string; relkind: string }>(
      `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'f', 'v', 'm') AND NOT c.relispartition
       ORDER BY c.relname`,
      [schema],
    );
    return rows.map((r) => ({
      schema,
      name: r.relname,
      kind: r.relkind === 'v' || r.relkind === 'm' ? 'view' : 'table',
    }));
  }

  async listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    const rows = await this.catalog<{
      attname: string;
      db_type: string;
      typname: string;
      typcategory: string;
      base_oid: string;
      nullable: string;
    }>(
      `SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS db_type, t.typname, t.typcategory,
              (CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END)::int AS base_oid,
              (NOT a.attnotnull)::text AS nullable
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_type t ON t.oid = a.atttypid
       WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY a.attnum`,
      [schema, table],
    );
    if (rows.length === 0) await this.assertTableExists(schema, table);
    return rows.map((r) => {
      const oid = Number(r.base_oid);
      const info =
        builtinPgType(oid) ?? pgTypeFromCatalog({ typname: r.typname, typcategory: r.typcategory, base_oid: oid });
      return { name: r.attname, db_type: r.db_type, primitive_type: info.primitive, nullable: r.nullable === 'true' };
    });
  }

  /**
   * Under `readOnly` every statement runs inside BEGIN READ ONLY, which always ends with ROLLBACK (a read has
   * nothing to keep, and what a read-only transaction still allows, e.g. lo_import or pg_notify, is undone), and
   * the text goes over the extended protocol, which takes exactly one statement: nothing can follow a COMMIT. The one
   * exception is a bounded read of the query compiler's own text (QueryOptions.compiledText), which a scan has found
   * to be one statement of the compiler's shape: it goes with BEGIN READ ONLY and ROLLBACK as one simple-protocol text
   * (oneTripRead), one answer of the server instead of three, written together with the other such reads waiting for
   * a connection (pipelined-reads.ts).
   */
  async openStream(sql: string, params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    this.assertOpen();
    const readOnly = opts.readOnly === true;
    const control = new RunControl(opts);
    let client: pg.PoolClient | undefined;
    let inTransaction = false;
    let released = false;
    let lost = false; // the connection itself failed: the client goes, never back to the pool
    // Back to the pool; a transaction still open is ended first (the only case with something to wait for).
    const release = (failed: boolean): Promise<void> | undefined => {
      if (released || !client) return undefined;
      released = true;
      control.dispose();
      // A cancelled backend may still be finishing: do not reuse it.
      const broken = (failed && !!control.reason) || lost;
      if (!inTransaction || lost) {
        client.release(broken);
        return undefined;
      }
      const held = client;
      return held.query(failed || readOnly ? 'ROLLBACK' : 'COMMIT').then(
        () => held.release(broken),
        () => held.release(true),
      );
    };
    // queryMode is pg's own option (not in its typings): the extended protocol even without parameters.
    const statement = <T extends pg.QueryConfig | pg.QueryArrayConfig>(config: T): T =>
      readOnly ? { ...config, queryMode: 'extended' } : config;
    try {
      control.throwIfStopped();
      const text = sql.trim().replace(/;\s*$/, '');
      const keyword = leadingKeyword(text);
      if (readOnly && WRITES_DESPITE_READ_ONLY.has(keyword)) {
        throw new ConnectorError(`Запрос ${keyword.toUpperCase()} не выполняется в режиме только для чтения`, 'query');
      }
      const single = splitStatements(text).length === 1;
      const limit = readOnly && CURSOR_STATEMENTS.has(keyword) && single ? opts.limit : undefined;
      const oneText =
        limit !== undefined && opts.compiledText ? oneTripRead(text, params, limit, opts.timeoutMs) : null;
      if (oneText) {
        // The pipelined reads own the connection (pipelined-reads.ts): its release and cancel are theirs.
        const last = await this.pipelined.read(oneText, text, control);
        const described = this.describeNow(null, last.fields ?? []);
        const { columns, convert } = described instanceof Promise ? await described : described;
        control.dispose();
        return wholeRowStream(columns, convert(last.rows), opts.limit);
      }

      client = await this.acquire();
      const pid = (client as unknown as { processID: number }).processID;
      control.onCancel(() => (released ? undefined : this.cancelBackend(pid)));

      if (limit !== undefined) {
        const last = await this.boundedRead(client, text, params, limit, opts.timeoutMs);
        const described = this.describeNow(client, last.fields ?? []);
        const { columns, convert } = described instanceof Promise ? await described : described;
        const rows = convert(last.rows);
        await release(false);
        return wholeRowStream(columns, rows, opts.limit);
      }

      let useCursor = CURSOR_STATEMENTS.has(keyword) && (readOnly || single);
      const cursor = `analytics_cursor_${++this.cursorSeq}`;
      const begin = readOnly ? 'BEGIN READ ONLY' : 'BEGIN';
      if (useCursor) {
        await this.beginGuarded(client, begin, opts.timeoutMs);
        inTransaction = true;
        try {
          await client.query(statement({ text: `DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, values: params }));
        } catch (err) {
          // e.g. a data-modifying WITH cannot be a cursor: run it plainly instead.
          if (errorCode(err) !== '0A000' || control.reason) throw err;
          await client.query('ROLLBACK');
          inTransaction = false;
          useCursor = false;
        }
      }

      if (!useCursor) {
        if (readOnly) {
          await this.beginGuarded(client, begin, opts.timeoutMs);
          inTransaction = true;
        }
        const res = await client.query(statement({ text, values: params, rowMode: 'array' }));
        const results = (Array.isArray(res) ? res : [res]) as pg.QueryResult<unknown[]>[];
        const last = [...results].reverse().find((r) => r.fields?.length) ?? results[results.length - 1];
        const { columns, convert } = await this.describe(client, last?.fields ?? []);
        const rows = convert(last?.rows ?? []);
        await release(false);
        return wholeRowStream(columns, rows, opts.limit);
      }

      const fetchSize = opts.limit !== undefined ? Math.max(1, Math.min(opts.limit, FETCH_SIZE)) : FETCH_SIZE;
      const fetch = () =>
        client!.query({ text: `FETCH ${fetchSize} FROM ${cursor}`, rowMode: 'array' }) as Promise<
          pg.QueryResult<unknown[]>
        >;
      const first = await fetch();
      const { columns, convert } = await this.describe(client, first.fields);
      let pending: pg.QueryResult<unknown[]> | null = first;
      let done = false;
      const next = async (): Promise<unknown[][] | null> => {
        if (done) return null;
        try {
          const res: pg.QueryResult<unknown[]> = pending ?? (await fetch());
          pending = null;
          if (res.rows.length < fetchSize) done = true;
          if (res.rows.length === 0) return null;
          return convert(res.rows);
        } catch (err) {
          done = true;
          const e = control.error(err, (x) => this.mapError(x));
          lost = e.kind === 'connection';
          await release(true);
          throw e;
        }
      };
      return batchRowStream(columns, next, async () => release(false), opts.limit);
    } catch (err) {
      const e = control.error(err, (x) => this.mapError(x));
      lost = e.kind === 'connection';
      await release(true);
      control.dispose();
      throw e;
    }
  }

  /**
   * The SELECT's rows as CSV through COPY ... TO STDOUT (the server's bulk format: no per-value work in this process),
   * written to `out` with backpressure; for extracts. Runs READ ONLY on a connection of its own (pooled clients
   * pipeline, which a COPY cannot share), counted in the connection budget. Timestamps with a time zone are written
   * in UTC, as every other read normalises them. Cancelled at the server by the signal, like a stream.
   */
  async copyCsv(
    select: string,
    out: Writable,
    opts: CopyCsvOptions = {},
  ): Promise<{ columns: ResultColumn[]; rows: number }> {
    this.assertOpen();
    const control = new RunControl(opts);
    const port = this.settings.port ?? DEFAULT_PORT;
    const Client = budgetedPgClient(() => this.takeConnectionSlot(port)) as unknown as new (
      config: pg.ClientConfig,
    ) => pg.Client;
    const { max: _max, idleTimeoutMillis: _idle, ...config } = await this.clientConfig();
    const client = new Client({ ...config, pipeline: false } as pg.ClientConfig);
    client.on('error', () => {});
    let ended = false;
    try {
      control.throwIfStopped();
      try {
        await client.connect();
      } catch (err) {
        throw this.mapError(err, true);
      }
      const pid = (client as unknown as { processID: number }).processID;
      control.onCancel(() => (ended ? undefined : this.cancelBackend(pid)));
      const initialSql = this.settings.initial_sql?.trim();
      if (initialSql) await client.query(initialSql);
      await client.query('BEGIN READ ONLY');
      await client.query("SET LOCAL datestyle = 'ISO, YMD'");
      const text = select.trim().replace(/;\s*$/, '');
      const head = await client.query({
        text: `SELECT * FROM (\n${text}\n) AS analytics_copy LIMIT 0`,
        rowMode: 'array',
      });
      const { columns } = await this.describe(client as unknown as pg.PoolClient, head.fields);
      await opts.onColumns?.(columns);
      control.throwIfStopped();
      const list = columns.map((c) => {
        const q = quoteIdent(c.name);
        return c.db_type === 'timestamp with time zone' ? `(${q} AT TIME ZONE 'UTC') AS ${q}` : q;
      });
      const copy = new CopyOut(
        `COPY (SELECT ${list.join(', ') || '*'} FROM (\n${text}\n) AS analytics_copy) TO STDOUT WITH (FORMAT csv)`,
        out,
      );
      void client.query(copy as unknown as pg.QueryConfig);
      await copy.done;
      await client.query('ROLLBACK');
      return { columns, rows: copy.rows };
    } catch (err) {
      throw control.error(err, (x) => this.mapError(x));
    } finally {
      ended = true;
      control.dispose();
      await client.end().catch(() => {});
    }
  }

  /**
   * A read with a row limit: one plain statement, which PostgreSQL may plan in parallel (it never does for a
   * cursor), capped by an outer LIMIT so a statement without one cannot fill memory. BEGIN READ ONLY, the
   * statement (extended protocol: one statement only) and ROLLBACK go out pipelined, in one round trip, so the
   * rollback still undoes what a read-only transaction allows (large objects, settings) at no latency cost.
   */
  private async boundedRead(
    client: pg.PoolClient,
    text: string,
    params: unknown[],
    limit: number,
    timeoutMs: number | undefined,
  ): Promise<pg.QueryResult<unknown[]>> {
    const bounded = `SELECT * FROM (\n${text}\n) AS analytics_bounded LIMIT ${Math.max(0, Math.floor(limit))}`;
    // queryMode is pg's own option (not in its typings): the extended protocol even without parameters.
    const main = { text: bounded, values: params, rowMode: 'array', queryMode: 'extended' } as pg.QueryArrayConfig;
    const guard = statementTimeoutGuard(timeoutMs);
    // BEGIN and the timeout go as one simple-protocol text (both are our own constant statements). The pool's
    // clients pipeline, so the three statements are written at once; corked, they leave in one write instead of
    // three (one syscall and one wake-up of the server per widget read, not three).
    const stream = (client as unknown as { connection?: { stream?: Partial<Pick<Socket, 'cork' | 'uncork'>> } })
      .connection?.stream;
    stream?.cork?.();
    let sent: [Promise<unknown>, Promise<pg.QueryResult<unknown[]>>, Promise<unknown>];
    try {
      sent = [
        client.query(guard ? `BEGIN READ ONLY; ${guard}` : 'BEGIN READ ONLY'),
        client.query<unknown[]>(main),
        client.query('ROLLBACK'),
      ];
    } finally {
      stream?.uncork?.();
    }
    const [begin, read, end] = await Promise.allSettled(sent);
    if (begin.status === 'rejected') throw begin.reason;
    if (read.status === 'rejected') throw read.reason;
    if (end.status === 'rejected') throw end.reason;
    return read.value;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    this.poolMade = undefined;
    if (pool) await (await pool.catch(() => undefined))?.end();
    await this.endpoint.close();
  }

  private async getPool(): Promise<pg.Pool> {
    if (!this.pool) {
      const creating = this.createPool();
      this.pool = creating;
      creating.then(
        (made) => {
          if (this.pool === creating) this.poolMade = made;
        },
        () => {
          if (this.pool === creating) this.pool = undefined;
        },
      );
    }
    return this.pool;
  }

  private async createPool(): Promise<pg.Pool> {
    // Every physical connection takes a slot of the process's connection budget (connection-budget.ts).
    const port = this.settings.port ?? DEFAULT_PORT;
    const pool = new pg.Pool({
      ...(await this.clientConfig()),
      Client: budgetedPgClient(() => this.takeConnectionSlot(port)),
    });
    // An idle client that loses its server emits here; without a listener the process would crash.
    pool.on('error', () => {});
    // A checked-out client has no pool listener: its socket dying mid-query emits 'error' on the client itself.
    // The pending query is rejected with the same error, and the pool discards the client (no longer queryable)
    // when it is released; the listener only keeps the event from being unhandled.
    pool.on('connect', (client) => client.on('error', () => {}));
    return pool;
  }

  private async clientConfig(): Promise<pg.PoolConfig> {
    const s = this.settings;
    await this.guardHosts();
    const at = await this.endpoint.resolve();
    return {
      host: at.host,
      port: at.port,
      user: s.username,
      password: s.password ?? '',
      database: s.db || undefined,
      ssl: this.sslConfig(at.serverName),
      // The server's name resolves to the addresses the network policy approved, not to a fresh DNS answer.
      stream: () => socketWithLookup(this.lookup),
      connectionTimeoutMillis: this.connectTimeoutMs,
      idleTimeoutMillis: this.idleTimeoutMs,
      max: this.poolSize,
      application_name: 'analytics-platform',
      keepAlive: true,
      // Queries issued together go out together; only boundedRead issues more than one at a time.
      pipeline: true,
      types: RAW_TEXT,
    };
  }

  private sslConfig(serverName: string): false | ConnectionOptions {
    const ssl = this.settings.ssl;
    if (!ssl?.enabled) return false;
    return {
      rejectUnauthorized: ssl.reject_unauthorized ?? true,
      ca: ssl.ca || undefined,
      cert: ssl.cert || undefined,
      key: ssl.key || undefined,
      servername: /^[\d.:]+$/.test(serverName) ? undefined : serverName,
    };
  }

  /** A pooled client that has run initial_sql once, right after it connected. */
  private async acquire(): Promise<pg.PoolClient> {
    this.assertOpen();
    let client: pg.PoolClient;
    try {
      client = await (this.poolMade ?? (await this.getPool())).connect();
    } catch (err) {
      throw this.mapError(err, true);
    }
    if (!this.initialised.has(client)) {
      const initialSql = this.settings.initial_sql?.trim();
      if (initialSql) {
        try {
          await client.query(initialSql);
        } catch (err) {
          client.release(true);
          const e = this.mapError(err);
          throw new ConnectorError(
            `Ошибка в начальном SQL (initial_sql): ${e.message}`,
            e.kind === 'query' ? 'settings' : e.kind,
            { cause: err },
          );
        }
      }
      this.initialised.add(client);
    }
    return client;
  }

  private async catalog<T>(text: string, values: unknown[]): Promise<T[]> {
    const client = await this.acquire();
    try {
      const res = await client.query(text, values);
      client.release();
      return res.rows as T[];
    } catch (err) {
      const e = this.mapError(err);
      client.release(e.kind === 'connection');
      throw e;
    }
  }

  private async assertTableExists(schema: string, table: string): Promise<void> {
    const found = await this.catalog<{ ok: number }>(
      `SELECT 1 AS ok FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, table],
    );
    if (found.length === 0) throw new ConnectorError(`Таблица «${schema}.${table}» не найдена`, 'query');
  }

  /** describe(), without a round trip when every column's type is built in or already looked up (most reads). */
  private describeNow(client: pg.PoolClient | null, fields: pg.FieldDef[]) {
    return fields.every((f) => builtinPgType(f.dataTypeID) || this.typeCache.has(f.dataTypeID))
      ? this.described(fields)
      : this.describe(client, fields);
  }

  /**
   * Column metadata and a row converter; types that are not built in are looked up once in pg_type, on the read's
   * own connection, or on one of the pool's when the read's was not its own (a pipelined read).
   */
  private async describe(client: pg.PoolClient | null, fields: pg.FieldDef[]) {
    const unknown = [...new Set(fields.map((f) => f.dataTypeID))].filter(
      (oid) => !builtinPgType(oid) && !this.typeCache.has(oid),
    );
    if (unknown.length) {
      const text = `SELECT t.oid::int AS oid, format_type(t.oid, NULL) AS typname, t.typcategory, (CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END)::int AS base_oid
         FROM pg_type t WHERE t.oid = ANY($1::oid[])`;
      const rows = client ? (await client.query(text, [unknown])).rows : await this.catalog(text, [unknown]);
      for (const r of rows as { oid: string; typname: string; typcategory: string; base_oid: string }[]) {
        this.typeCache.set(
          Number(r.oid),
          pgTypeFromCatalog({ typname: r.typname, typcategory: r.typcategory, base_oid: Number(r.base_oid) }),
        );
      }
    }
    return this.described(fields);
  }

  /** Columns, and the converter of a read's rows (in place), by the types known (an unknown one reads as text). */
  private described(fields: pg.FieldDef[]) {
    const infos = fields.map(
      (f) =>
        builtinPgType(f.dataTypeID) ??
        this.typeCache.get(f.dataTypeID) ?? { name: String(f.dataTypeID), primitive: 'unknown' as const },
    );
    const columns: ResultColumn[] = fields.map((f, i) => ({
      name: f.name,
      db_type: infos[i].name,
      primitive_type: infos[i].primitive,
    }));
    const converters = fields.map((_, i) => pgValueConverter(infos[i].primitive));
    // In place: the rows and their arrays are pg's, made for this read alone, and a second array per row was a visible
    // share of a widget miss's allocations (bench:load heap profile).
    const convert = (rows: unknown[][]): unknown[][] => {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        for (let i = 0; i < converters.length; i++) row[i] = converters[i](row[i] as string | null);
      }
      return rows;
    };
    return { columns, convert };
  }

  /** BEGIN and, with a time budget, the server-side backstop, pipelined in one round trip. */
  private async beginGuarded(client: pg.PoolClient, begin: string, timeoutMs: number | undefined): Promise<void> {
    const guard = statementTimeoutGuard(timeoutMs);
    if (!guard) {
      await client.query(begin);
      return;
    }
    const [started, set] = await Promise.allSettled([client.query(begin), client.query(guard)]);
    if (started.status === 'rejected') throw started.reason;
    if (set.status === 'rejected') throw set.reason;
  }

  /** Cancels the backend's running statement from a separate short-lived connection (the pool may be full). */
  private async cancelBackend(pid: number): Promise<void> {
    const { max: _max, idleTimeoutMillis: _idle, ...config } = await this.clientConfig();
    const c = new pg.Client(config);
    c.on('error', () => {}); // a server that goes away now fails connect() or the query below
    try {
      await c.connect();
      await c.query('SELECT pg_cancel_backend($1)', [pid]);
    } finally {
      await c.end().catch(() => {});
    }
  }

  private mapError(err: unknown, connecting = false): ConnectorError {
    if (err instanceof ConnectorError) return err;
    const code = errorCode(err);
    const sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
    const message = errorMessage(err);
    const make = (kind: ConnectorError['kind']) => new ConnectorError(message, kind, { cause: err, code: sqlState });
    if (sqlState === '28P01' || sqlState === '28000') return authError(this.server, err, sqlState);
    if (sqlState === '57014') return make('cancelled');
    // Terminated by an administrator or a server shutdown: the connection is gone, whatever the server said.
    if (sqlState === '57P01' || sqlState === '57P02')
      return new ConnectorError(DROPPED_MESSAGE, 'connection', { cause: err, code: sqlState });
    if (sqlState === '3D000' || sqlState?.startsWith('08') || sqlState === '57P03' || sqlState === '53300')
      return make('connection');
    if (!sqlState && (connecting || isNetworkError(err))) {
      return connectionError(this.server, err, { product: 'PostgreSQL', timeoutMs: this.connectTimeoutMs });
    }
    return make('query');
  }
}

/** How long past a run's budget the server-side backstop waits for the run's own cancel to arrive. */
const STATEMENT_TIMEOUT_GRACE_MS = 1_000;

/**
 * A bounded read of the query compiler's statement as ONE simple-protocol text (adapters/sources/postgresql/
 * inline-params.ts): BEGIN READ ONLY, the timeout, the SELECT with its parameters written in, ROLLBACK. Null when
 * the statement is not shaped as the compiler makes it (it then goes as boundedRead sends any other).
 */
function oneTripRead(text: string, params: unknown[], limit: number, timeoutMs: number | undefined): string | null {
  const inlined = inlineCompiledParams(text, params);
  if (inlined === null) return null;
  const guard = statementTimeoutGuard(timeoutMs);
  const bounded = `SELECT * FROM (\n${inlined}\n) AS analytics_bounded LIMIT ${Math.max(0, Math.floor(limit))}`;
  return `BEGIN READ ONLY;${guard ? ` ${guard};` : ''} ${bounded}; ROLLBACK`;
}

/**
 * The server's own limit for a statement of a run with a time budget, a little past the budget: the run's cancel
 * (pg_cancel_backend from a separate connection) normally stops it first, but that connection can be refused (the
 * server's max_connections reached, the network gone), and a statement nobody can cancel would otherwise run on for
 * as long as it takes. SET LOCAL ends with the transaction, so the pooled session keeps its own setting.
 */
function statementTimeoutGuard(timeoutMs: number | undefined): string | null {
  if (!timeoutMs || timeoutMs <= 0) return null;
  return `SET LOCAL statement_timeout = ${Math.ceil(timeoutMs + STATEMENT_TIMEOUT_GRACE_MS)}`;
}
