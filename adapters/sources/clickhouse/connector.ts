import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { connectTimeoutAgent } from '../connect-timeout-agent';
import { ConnectorBase } from '../connector-base';
import { authError, connectionError, connectionOutcome, errorMessage } from '../driver-errors';
import { budgetAgent } from '../budgeted-socket';
import { describeServer, Endpoint } from '../endpoint';
import { RunControl } from '../run-control';
import { leadingKeyword } from '../split-statements';
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
import { clickhouseString, clickhouseType, clickhouseValueConverter, parseTsvLine } from './types';
import { parseInitialSql } from './initial-sql';

const DEFAULT_HTTP_PORT = 8123;
/** ClickHouse answers these with a result set; anything else goes through `command` (no FORMAT appended). */
const RESULT_STATEMENTS = new Set(['select', 'with', 'show', 'describe', 'desc', 'exists', 'explain']);
const SYSTEM_DATABASES = ['system', 'INFORMATION_SCHEMA', 'information_schema'];
// Debian's ClickHouse is 18.16: no query_params, no JSONCompactEachRow. TabSeparatedWithNamesAndTypes streams
// line by line, carries the types and exists in every version.
const FORMAT = 'TabSeparatedWithNamesAndTypes';
const PRODUCT = 'ClickHouse';
const LOG_OFF = 127; // ClickHouseLogLevel.OFF: errors are reported to the caller, not printed

export class ClickHouseConnector extends ConnectorBase {
  readonly kind = 'clickhouse' as const;
  readonly dialect = 'clickhouse' as const;
  private readonly endpoint: Endpoint;
  private client: Promise<{ client: ClickHouseClient; agent: http.Agent }> | undefined;
  private readonly sessionSettings: ClickHouseSettings;
  private readonly initialStatements: string[];
  private initialised: Promise<void> | undefined;
  private serverZone: Promise<string> | undefined;

  constructor(settings: SourceSettings, options?: ConnectorOptions) {
    super(settings, options);
    this.endpoint = new Endpoint(settings, this.httpPort, this.connectTimeoutMs, this.lookup);
    const initial = parseInitialSql(settings.initial_sql ?? '');
    this.sessionSettings = initial.settings;
    this.initialStatements = initial.statements;
  }

  private get httpPort(): number {
    return this.settings.http_port ?? DEFAULT_HTTP_PORT;
  }

  private get server(): string {
    return describeServer(this.settings, this.httpPort);
  }

  async check(): Promise<void> {
    const signal = AbortSignal.timeout(this.connectTimeoutMs * 2);
    try {
      const rows = await this.textRows('SELECT 1', signal);
      if (rows.length !== 1 || rows[0][0] !== '1') throw new NotClickHouseError();
    } catch (err) {
      if (signal.aborted) {
        throw connectionError(this.server, err, {
          product: PRODUCT,
          timeoutMs: this.connectTimeoutMs * 2,
          outcome: 'timeout',
        });
      }
      const e = this.mapError(err);
      // An unknown database named in the settings is a connection problem at check time.
      if (e.code === '81') throw new ConnectorError(e.message, 'connection', { cause: err, code: e.code });
      throw e;
    }
  }

  async listSchemas(): Promise<string[]> {
    const rows = await this.textRows(
      `SELECT name FROM system.databases WHERE name NOT IN (${SYSTEM_DATABASES.map(clickhouseString).join(', ')}) ORDER BY name`,
    );
    return rows.map((r) => r[0] ?? '');
  }

  async listTables(schema: string): Promise<TableInfo[]> {
    const rows = await this.textRows(
      `SELECT name, engine FROM system.tables WHERE database = ${clickhouseString(schema)} ORDER BY name`,
    );
    return rows.map((r) => ({ schema, name: r[0] ?? '', kind: /View$/.test(r[1] ?? '') ? 'view' : 'table' }));
  }

  async listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    const rows = await this.textRows(
      `SELECT name, type FROM system.columns WHERE database = ${clickhouseString(schema)} AND table = ${clickhouseString(table)}`,
    );
    if (rows.length === 0) throw new ConnectorError(`Таблица «${schema}.${table}» не найдена`, 'query');
    return rows.map((r) => {
      const type = r[1] ?? '';
      return {
        name: r[0] ?? '',
        db_type: type,
        primitive_type: clickhouseType(type).primitive,
        nullable: type.startsWith('Nullable('),
      };
    });
  }

  async openStream(sql: string, params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    this.assertOpen();
    this.assertNoParams(params);
    const control = new RunControl(opts);
    const queryId = randomUUID();
    const abort = new AbortController();
    control.onCancel(async () => {
      abort.abort();
      await this.killQuery(queryId);
    });
    try {
      control.throwIfStopped();
      const client = await this.ready();
      const text = sql.trim().replace(/;\s*$/, '');
      const settings: ClickHouseSettings = { ...this.sessionSettings };
      if (opts.timeoutMs) settings.max_execution_time = Math.max(1, Math.ceil(opts.timeoutMs / 1000));
      // readonly = 2: no INSERT, DDL or SET, while the request's own settings (above and below) and a query's SETTINGS
      // clause (the engine's join_use_nulls) still apply; 1 would refuse that clause (and every table function).
      // Read-only table functions (url, file, remote) still run at 2. A stricter 1 from initial_sql stays.
      if (opts.readOnly && String(settings.readonly ?? '0') !== '1') settings.readonly = '2';

      if (!RESULT_STATEMENTS.has(leadingKeyword(text))) {
        const res = await client.command({
          query: text,
          query_id: queryId,
          abort_signal: abort.signal,
          clickhouse_settings: settings,
        });
        assertClickHouse(res.response_headers);
        control.dispose();
        return emptyStream();
      }
      if (opts.limit !== undefined) {
        // The server stops producing rows soon after the limit instead of computing the whole result.
        settings.max_result_rows = String(Math.max(1, opts.limit));
        settings.result_overflow_mode = 'break';
      }
      const rs = await client.query({
        query: text,
        format: FORMAT,
        query_id: queryId,
        abort_signal: abort.signal,
        clickhouse_settings: settings,
      });
      if (!isClickHouse(rs.response_headers)) {
        rs.close();
        throw new NotClickHouseError();
      }
      const lines = tsvLines(rs.stream() as AsyncIterable<{ text: string }[]>);
      const names = await lines.next();
      const types = await lines.next();
      const nameFields = names.done ? [] : parseTsvLine(names.value);
      const typeFields = types.done ? [] : parseTsvLine(types.value);
      const infos = typeFields.map((t) => clickhouseType(t ?? ''));
      const zone = infos.some((i) => i.usesServerZone) ? await this.zone() : undefined;
      const columns: ResultColumn[] = nameFields.map((n, i) => ({
        name: n ?? '',
        db_type: typeFields[i] ?? '',
        primitive_type: infos[i]?.primitive ?? 'unknown',
      }));
      const converters = infos.map((i) => clickhouseValueConverter(i, zone));
      const self = this;
      let closing: Promise<void> | undefined;
      let finished = false;
      const close = () =>
        (closing ??= (async () => {
          control.dispose();
          if (!finished) {
            abort.abort(); // stops the download; the server notices when it next writes
            rs.close();
          }
          await lines.return(undefined).catch(() => {});
        })());
      return {
        columns,
        close,
        async *[Symbol.asyncIterator]() {
          let seen = 0;
          try {
            while (opts.limit === undefined || seen < opts.limit) {
              let step: IteratorResult<string>;
              try {
                step = await lines.next();
              } catch (err) {
                throw control.error(err, (e) => self.mapError(e));
              }
              if (step.done) {
                finished = true;
                break;
              }
              const fields = parseTsvLine(step.value);
              if (fields.length !== columns.length) {
                // An exception after the first rows is appended to the body as text, not signalled by status.
                throw control.error(new Error(step.value), (e) => self.mapError(e));
              }
              seen++;
              yield fields.map((v, i) => converters[i](v));
            }
          } finally {
            await close();
          }
        },
      };
    } catch (err) {
      control.dispose();
      throw control.error(err, (e) => this.mapError(e));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    if (c) {
      const opened = await c.catch(() => undefined);
      await opened?.client.close();
      opened?.agent.destroy();
    }
    await this.endpoint.close();
  }

  private getClient(): Promise<{ client: ClickHouseClient; agent: http.Agent }> {
    if (!this.client) {
      const creating = this.createClient();
      this.client = creating;
      creating.catch(() => {
        if (this.client === creating) this.client = undefined;
      });
    }
    return this.client;
  }

  private async createClient(): Promise<{ client: ClickHouseClient; agent: http.Agent }> {
    const s = this.settings;
    await this.guardHosts();
    const at = await this.endpoint.resolve();
    const secure = !!s.ssl?.enabled;
    const agent = connectTimeoutAgent(secure, this.connectTimeoutMs, {
      maxSockets: this.poolSize,
      // The server's name resolves to the addresses the network policy approved, not to a fresh DNS answer.
      lookup: this.lookup,
      ...(secure
        ? {
            rejectUnauthorized: s.ssl?.reject_unauthorized ?? true,
            ca: s.ssl?.ca || undefined,
            cert: s.ssl?.cert || undefined,
            key: s.ssl?.key || undefined,
            servername: /^[\d.:]+$/.test(at.serverName) ? undefined : at.serverName,
          }
        : {}),
    });
    // Every socket takes a slot of the process's connection budget (connection-budget.ts).
    budgetAgent(agent, () => this.takeConnectionSlot(this.httpPort));
    const client = createClient({
      url: `${secure ? 'https' : 'http'}://${at.host.includes(':') ? `[${at.host}]` : at.host}:${at.port}`,
      username: s.username || 'default',
      password: s.password ?? '',
      database: s.db || undefined,
      // Long analytical queries are bounded by QueryOptions.timeoutMs, not by the HTTP layer.
      request_timeout: 24 * 3600 * 1000,
      max_open_connections: this.poolSize,
      compression: { response: false, request: false },
      http_agent: agent,
      set_basic_auth_header: true,
      application: 'analytics-platform',
      log: { level: LOG_OFF },
    });
    return { client, agent };
  }

  /** The client, after the non-SET part of initial_sql has run once (HTTP has no lasting connection). */
  private async ready(): Promise<ClickHouseClient> {
    this.assertOpen();
    const { client } = await this.getClient();
    if (!this.initialised) {
      const running = (async () => {
        for (const stmt of this.initialStatements) {
          try {
            assertClickHouse(
              (await client.command({ query: stmt, clickhouse_settings: this.sessionSettings })).response_headers,
            );
          } catch (err) {
            const e = this.mapError(err);
            throw new ConnectorError(
              `Ошибка в начальном SQL (initial_sql): ${e.message}`,
              e.kind === 'query' ? 'settings' : e.kind,
              { cause: err },
            );
          }
        }
      })();
      this.initialised = running;
      running.catch(() => {
        if (this.initialised === running) this.initialised = undefined;
      });
    }
    await this.initialised;
    return client;
  }

  private async textRows(sql: string, signal?: AbortSignal): Promise<(string | null)[][]> {
    try {
      const client = await this.ready();
      const rs = await client.query({
        query: sql,
        format: 'TabSeparated',
        abort_signal: signal,
        clickhouse_settings: this.sessionSettings,
      });
      if (!isClickHouse(rs.response_headers)) {
        rs.close();
        throw new NotClickHouseError();
      }
      const text = await rs.text();
      return text
        .split('\n')
        .filter((l) => l.length > 0)
        .map(parseTsvLine);
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /** The server's time zone, in which DateTime columns without their own zone are printed. */
  private zone(): Promise<string> {
    if (!this.serverZone) {
      const loading = this.textRows('SELECT timezone()').then((r) => r[0]?.[0] ?? 'UTC');
      this.serverZone = loading;
      loading.catch(() => {
        if (this.serverZone === loading) this.serverZone = undefined;
      });
    }
    return this.serverZone;
  }

  private async killQuery(queryId: string): Promise<void> {
    const { client } = await this.getClient();
    await client.command({ query: `KILL QUERY WHERE query_id = ${clickhouseString(queryId)} ASYNC` });
  }

  private mapError(err: unknown): ConnectorError {
    if (err instanceof ConnectorError) return err;
    const raw = errorMessage(err);
    const code = /Code:\s*(\d+)/.exec(raw)?.[1];
    // 18.16 wraps the text: "Code: 193, e.displayText() = DB::Exception: Wrong password ..., e.what() = DB::Exception"
    const stripped = raw.replace(/,\s*e\.what\(\)\s*=[\s\S]*$/, '');
    const message = (/DB::Exception:\s*([\s\S]*)$/.exec(stripped)?.[1] ?? stripped).trim();
    if (code && ['192', '193', '194', '195', '516'].includes(code)) return authError(this.server, err, code, message);
    if (code === '394') return new ConnectorError(message, 'cancelled', { cause: err, code });
    if (code === '159') return new ConnectorError(message, 'timeout', { cause: err, code });
    if (code) return new ConnectorError(message, 'query', { cause: err, code });
    // Anything else came from the socket, or from a web service that is not ClickHouse (its body is not repeated).
    const outcome = err instanceof NotClickHouseError ? 'not-server' : connectionOutcome(err);
    return connectionError(this.server, err, { product: PRODUCT, timeoutMs: this.connectTimeoutMs, outcome });
  }
}

/** A 2xx answer without ClickHouse's own headers: some other web service listens on the port. */
class NotClickHouseError extends Error {}

/** Every ClickHouse version since 18.x sends X-ClickHouse-* headers (server display name, query id, summary). */
function isClickHouse(headers: Record<string, unknown> | undefined): boolean {
  return !!headers && Object.keys(headers).some((h) => h.toLowerCase().startsWith('x-clickhouse-'));
}

function assertClickHouse(headers: Record<string, unknown> | undefined): void {
  if (!isClickHouse(headers)) throw new NotClickHouseError();
}

/** Lines of a TabSeparated* response, as the client splits them. */
async function* tsvLines(batches: AsyncIterable<{ text: string }[]>): AsyncGenerator<string, void, undefined> {
  for await (const batch of batches) {
    for (const row of batch) yield row.text;
  }
}

function emptyStream(): RowStream {
  return {
    columns: [],
    close: async () => {},
    async *[Symbol.asyncIterator]() {},
  };
}
