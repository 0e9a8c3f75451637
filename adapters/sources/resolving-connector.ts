import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type {
  ColumnInfo,
  Connector,
  Dialect,
  QueryOptions,
  QueryResult,
  ResultColumn,
  RowStream,
  SourceKind,
  TableInfo,
} from './types';

/**
 * A connector whose calls each go to the connector `resolve` answers at that moment: the platform hands one out
 * synchronously for a saved source, while which driver serves the source (bundled or an uploaded plugin, chosen
 * per source kind by an administrator) is only known after an asynchronous read. Resolving on every call makes a
 * driver switch apply to the next call of whoever holds this object.
 */
export class ResolvingConnector implements Connector {
  private last: Connector | undefined;

  constructor(
    readonly kind: SourceKind,
    readonly dialect: Dialect,
    private readonly resolve: () => Promise<Connector>,
    /**
     * The connector `resolve` would answer, when it is known without waiting (undefined otherwise): reads, the hot
     * path of every widget, then go to it with none of the resolving's awaits.
     */
    private readonly resolveNow?: () => Connector | undefined,
  ) {}

  private async target(): Promise<Connector> {
    this.last = await this.resolve();
    return this.last;
  }

  /** The connector known now, or undefined; a failure to tell is resolve's to report. */
  private known(): Connector | undefined {
    try {
      const known = this.resolveNow?.();
      if (known) this.last = known;
      return known;
    } catch {
      return undefined;
    }
  }

  async check(): Promise<void> {
    return (await this.target()).check();
  }

  async listSchemas(): Promise<string[]> {
    return (await this.target()).listSchemas();
  }

  async listTables(schema: string): Promise<TableInfo[]> {
    return (await this.target()).listTables(schema);
  }

  async listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    return (await this.target()).listColumns(schema, table);
  }

  query(sql: string, params: unknown[], opts?: QueryOptions): Promise<QueryResult> {
    const known = this.known();
    if (known) return known.query(sql, params, opts);
    return this.target().then((c) => c.query(sql, params, opts));
  }

  async *stream(sql: string, params: unknown[], opts?: QueryOptions): AsyncIterable<unknown[]> {
    yield* (await this.target()).stream(sql, params, opts);
  }

  openStream(sql: string, params: unknown[], opts?: QueryOptions): Promise<RowStream> {
    const known = this.known();
    if (known) return known.openStream(sql, params, opts);
    return this.target().then((c) => c.openStream(sql, params, opts));
  }

  /**
   * Whether there is a bulk CSV copy must be answered before anything is resolved, so it follows the kind (the
   * bundled PostgreSQL connector has one). A driver without it (a plugin) is read through its row stream and
   * written in the same CSV form: NULL an empty field, every string quoted.
   */
  get copyCsv(): Connector['copyCsv'] {
    if (this.kind !== 'postgresql') return undefined;
    return async (select, out, opts) => {
      const target = await this.target();
      if (target.copyCsv) return target.copyCsv(select, out, opts);
      return streamAsCsv(target, select, out, opts);
    };
  }

  /** Closes the connector the last call went to (a pooled one: its pool; the next call opens a new one). */
  async close(): Promise<void> {
    await this.last?.close();
  }
}

async function streamAsCsv(
  connector: Connector,
  select: string,
  out: Writable,
  opts?: QueryOptions,
): Promise<{ columns: ResultColumn[]; rows: number }> {
  const stream = await connector.openStream(select, [], opts);
  let rows = 0;
  try {
    for await (const row of stream) {
      const line = row.map(csvField).join(',') + '\n';
      rows++;
      if (!out.write(line)) await once(out, 'drain', { signal: opts?.signal });
    }
    return { columns: stream.columns, rows };
  } finally {
    await stream.close();
  }
}

function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  const text = typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : JSON.stringify(v);
  return `"${text.replaceAll('"', '""')}"`;
}
