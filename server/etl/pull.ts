import { execFile } from 'node:child_process';
import { constants as fsConstants, openSync } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Connector, PrimitiveType, ResultColumn } from '../../adapters/sources';
import type { DatasetModel, DatasetObject } from '../query/compile/dataset-model';
import { escapeLiteral, quoteIdentifier, type Dialect } from '../query/expr';
import { extractTableOf } from './etl';
import { partFileOf } from './files';

const execFileAsync = promisify(execFile);

/*
 * One synchronisation of a dataset into its extract (the work of an extract run, server/etl/run-job.ts). Each
 * object is streamed from its source (PostgreSQL's COPY, else the connector's cursor; bounded memory) as CSV into a
 * named pipe that DuckDB's COPY reads at the same time, into the object's table of a new extract file
 * (DATA_DIR/extracts/dataset-<id>.duckdb.<run>.part): the load costs no time beyond the pull. The complete file is
 * answered to the run, which stores it as a new load (server/etl/loads.ts) and makes it current with its success:
 * readers keep the load they opened, new reads open the new one, and a failure, cancel or killed process leaves the
 * previous load in service (a leftover .part is removed by the next run or the sweep).
 *
 * Incremental mode copies the current load (`previousFile`) and adds the rows of the incremental field's object whose
 * value is above the extract's maximum; the other objects are reloaded in full.
 */

export interface PullSource {
  connector: Connector;
  dialect: Dialect;
}

export interface PullPlan {
  model: DatasetModel;
  /** The source of each object's data source id. */
  sourceOf: (dataSourceId: number) => PullSource;
  mode: 'full' | 'incremental';
  /** Incremental mode: the object and column whose new values are added. */
  incremental?: { objectId: number; column: string };
  runId: number;
  /** The partial file goes under DATA_DIR/extracts. */
  dataDir: string;
  /** Incremental mode: a local copy of the current load (none before the first: the run loads in full). */
  previousFile?: string;
  signal: AbortSignal;
  onStep: (message: string) => Promise<void>;
  /** Rows loaded so far (all objects), called per batch; `total` when the sources could count them. */
  onProgress: (rows: number, total: number | null) => void;
}

const DUCKDB_TYPES: Record<PrimitiveType, string> = {
  integer: 'BIGINT',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP',
  string: 'VARCHAR',
  unknown: 'VARCHAR',
};

/** The columns of an object the dataset's fields read (in field order, no repeats); none: every column. */
function columnsOf(model: DatasetModel, object: DatasetObject): string[] {
  const cols = model.fields.filter((f) => f.objectId === object.id && f.column).map((f) => f.column!);
  return [...new Set(cols)];
}

function fromSql(dialect: Dialect, object: DatasetObject): string {
  if (object.kind === 'sql') return `(${(object.sql ?? '').trim().replace(/;\s*$/, '')}) AS src`;
  const table = quoteIdentifier(dialect, object.table ?? '');
  return object.schema ? `${quoteIdentifier(dialect, object.schema)}.${table}` : table;
}

/** A complete extract file built by a pull: the caller stores it as a load and removes it. */
export interface PulledExtract {
  rows: number;
  file: string;
}

/** Runs the pull; answers the rows loaded and the complete file. Throws (no file left) on failure or abort. */
export async function pullExtract(plan: PullPlan): Promise<PulledExtract> {
  const { model, dataDir, runId } = plan;
  const part = partFileOf(dataDir, model.id, runId);
  await mkdir(path.dirname(part), { recursive: true });
  // A retry of the run on this node starts from nothing: whatever a dead attempt left goes first.
  await rm(part, { force: true });
  await rm(`${part}.wal`, { force: true });
  const incremental = plan.mode === 'incremental' && plan.previousFile ? plan.incremental : undefined;
  if (incremental) await copyFile(plan.previousFile!, part);

  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  const pipes: string[] = [];
  try {
    // A small buffer pool (the load spills to disk instead of growing the API process); row order is not kept (every
    // query that needs an order says so), which lets DuckDB load in parallel with less memory.
    // DuckDB loads with the first extract run, not with the server.
    const { DuckDBInstance: Duck } = await import('@duckdb/node-api');
    instance = await Duck.create(part, {
      threads: '2',
      memory_limit: '128MB',
      preserve_insertion_order: 'false',
    });
    conn = await instance.connect();
    const c = conn;
    const onAbort = () => c.interrupt();
    plan.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // Counting gives the run a percentage; it runs beside the pull (another connection), not before it. A saved SQL
      // query is not run twice for it.
      let total: number | null = null;
      const counted = countRows(plan, incremental).then(
        (n) => void (total = n),
        () => undefined,
      );
      let loaded = 0;
      for (const object of model.objects) {
        plan.signal.throwIfAborted();
        const pipe = `${part}.${object.id}.pipe`;
        pipes.push(pipe);
        const append = incremental?.objectId === object.id;
        const rows = await pullObject(plan, c, object, pipe, append ? incremental : undefined, (n) =>
          plan.onProgress(loaded + n, total),
        );
        loaded += rows;
        await counted;
        plan.onProgress(loaded, total);
        await plan.onStep(
          append
            ? `Объект «${object.name}»: добавлено строк ${rows}`
            : `Объект «${object.name}»: загружено строк ${rows}`,
        );
        await rm(pipe, { force: true });
      }
      plan.signal.throwIfAborted();
      await c.run('CHECKPOINT');
      plan.signal.removeEventListener('abort', onAbort);
      c.closeSync();
      conn = undefined;
      instance.closeSync();
      instance = undefined;
      return { rows: loaded, file: part };
    } finally {
      plan.signal.removeEventListener('abort', onAbort);
    }
  } catch (e) {
    conn?.closeSync();
    instance?.closeSync();
    await rm(part, { force: true });
    await rm(`${part}.wal`, { force: true });
    throw e;
  } finally {
    await Promise.all(pipes.map((p) => rm(p, { force: true })));
  }
}

async function countRows(plan: PullPlan, incremental: PullPlan['incremental']): Promise<number | null> {
  let total = 0;
  for (const object of plan.model.objects) {
    if (object.kind !== 'table' || incremental?.objectId === object.id) return null;
    const { connector, dialect } = plan.sourceOf(object.dataSourceId);
    const res = await connector.query(`SELECT COUNT(*) FROM ${fromSql(dialect, object)}`, [], {
      signal: plan.signal,
      readOnly: true,
    });
    const n = Number(res.rows[0]?.[0]);
    if (!Number.isFinite(n)) return null;
    total += n;
  }
  return total;
}

async function pullObject(
  plan: PullPlan,
  c: DuckDBConnection,
  object: DatasetObject,
  pipe: string,
  incremental: PullPlan['incremental'],
  progress: (rows: number) => void,
): Promise<number> {
  const { connector, dialect } = plan.sourceOf(object.dataSourceId);
  const table = quoteIdentifier('duckdb', extractTableOf(object.id));
  const wanted = columnsOf(plan.model, object);
  const select = wanted.length ? wanted.map((col) => quoteIdentifier(dialect, col)).join(', ') : '*';
  let where = '';
  if (incremental) {
    const col = quoteIdentifier('duckdb', incremental.column);
    const [max, text] = (
      await c.runAndReadAll(`SELECT max(${col}), CAST(max(${col}) AS VARCHAR) FROM ${table}`)
    ).getRowsJS()[0] ?? [null, null];
    const literal = incrementalLiteral(dialect, max, text);
    if (literal !== null) where = ` WHERE ${quoteIdentifier(dialect, incremental.column)} > ${literal}`;
  }
  const sql = `SELECT ${select} FROM ${fromSql(dialect, object)}${where}`;
  const loader = new PipeLoader(c, table, pipe, plan.signal);
  try {
    // The table is made and the loader opened once the source has told the columns; DuckDB then reads the CSV
    // while the source is still sending it.
    const open = async (columns: ResultColumn[]) => {
      if (!incremental) {
        const declared = await declaredTypes(connector, object);
        const defs = columns.map(
          (col) => `${quoteIdentifier('duckdb', col.name)} ${decimalOf(declared.get(col.name)) ?? duckdbType(col)}`,
        );
        await c.run(`DROP TABLE IF EXISTS ${table}`);
        await c.run(`CREATE TABLE ${table} (${defs.join(', ')})`);
      }
      return loader.open();
    };
    const rows = connector.copyCsv
      ? await copyThrough(connector, sql, open, loader.signal, progress)
      : await streamThrough(connector, sql, open, loader.signal, progress);
    await loader.finish();
    plan.signal.throwIfAborted();
    return rows;
  } catch (e) {
    throw await loader.fail(e);
  }
}

/**
 * DuckDB's COPY reading a named pipe (mkfifo) that the source's CSV is written into: the load runs while the pull
 * runs, with a pipe's worth of bytes in between (memory stays flat). The pipe is opened non-blocking for writing
 * once DuckDB has opened it for reading, so either side failing ends the other: a failed load aborts the pull at
 * the source (`signal`), a failed pull closes the pipe and the partial load is discarded with the part file.
 */
class PipeLoader {
  private readonly abort = new AbortController();
  private load: Promise<void> | undefined;
  private loadError: unknown;
  /** The load failed on its own, not because a failed pull cut its input short (a truncated last line). */
  private loadFailedFirst = false;
  private sink: Socket | undefined;
  /** Aborts the pull: the run is cancelled, or the load failed. */
  readonly signal: AbortSignal;

  constructor(
    private readonly c: DuckDBConnection,
    private readonly table: string,
    private readonly pipe: string,
    runSignal: AbortSignal,
  ) {
    this.signal = AbortSignal.any([runSignal, this.abort.signal]);
  }

  /** Starts DuckDB's COPY from the pipe and answers the pipe's writing end. */
  async open(): Promise<Writable> {
    await rm(this.pipe, { force: true });
    await execFileAsync('mkfifo', ['-m', '600', this.pipe]);
    let settled = false;
    this.load = this.c
      .run(
        `COPY ${this.table} FROM ${escapeLiteral('duckdb', this.pipe)} (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '"', ESCAPE '"', NULLSTR '', ALLOW_QUOTED_NULLS false, AUTO_DETECT false)`,
      )
      .then(
        () => undefined,
        (e: unknown) => {
          this.loadError = loadFailure(e);
          // A sink destroyed before the load failed was destroyed by the failed pull: its error is the reason.
          this.loadFailedFirst = !this.sink?.destroyed;
          this.abort.abort(this.loadError);
          this.sink?.destroy();
        },
      )
      .finally(() => (settled = true));
    // Opening a pipe for writing without a reader fails at once (ENXIO) when non-blocking: wait for DuckDB's open.
    for (;;) {
      try {
        const fd = openSync(this.pipe, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
        const sink = new Socket({ fd, readable: false, writable: true });
        sink.on('error', () => undefined);
        this.sink = sink;
        return sink;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENXIO') throw e;
        if (settled) throw this.loadError ?? e;
        this.signal.throwIfAborted();
        await sleep(2);
      }
    }
  }

  /** The pull has ended: the pipe is closed (DuckDB reads the end of the file) and the load awaited. */
  async finish(): Promise<void> {
    const sink = this.sink;
    if (sink && !sink.closed)
      await new Promise<void>((resolve) => {
        sink.once('close', () => resolve());
        sink.end();
      });
    await this.load;
    if (this.loadError) throw this.loadError;
  }

  /** The error to throw after a failure (the load's own when it failed first); the pipe is closed, the load ended. */
  async fail(e: unknown): Promise<unknown> {
    this.abort.abort(e);
    this.sink?.destroy();
    await this.load;
    return this.loadFailedFirst ? this.loadError : e;
  }
}

/**
 * DuckDB refused the source's rows (a value its column type cannot hold): said in Russian with DuckDB's first line,
 * without the server's paths it prints below. A full disk keeps its own error, which the run names plainly.
 */
function loadFailure(e: unknown): unknown {
  if (!(e instanceof Error) || /No space left on device/i.test(e.message)) return e;
  const first = e.message.split('\n')[0]!.replace(/\/\S+/g, '…').slice(0, 500);
  return new Error(`Не удалось загрузить строки источника в извлечение: ${first}`, { cause: e });
}

/** PostgreSQL: the server's own CSV (COPY ... TO STDOUT) straight into the loader; lines counted for progress. */
async function copyThrough(
  connector: Connector,
  sql: string,
  open: (columns: ResultColumn[]) => Promise<Writable>,
  signal: AbortSignal,
  progress: (rows: number) => void,
): Promise<number> {
  let lines = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      // Every chunk: progress only notes the count (the run's heartbeat writes it each second), and a pull that
      // stalls after a burst must show the rows of that burst, not those of the last report before it.
      progress(lines);
      done(null, chunk);
    },
  });
  let written: Promise<void> | undefined;
  try {
    const result = await connector.copyCsv!(sql, counter, {
      signal,
      readOnly: true,
      onColumns: async (columns) => {
        const sink = await open(columns);
        written = pipeline(counter, sink);
        written.catch(() => undefined);
      },
    });
    counter.end();
    await written;
    return result.rows;
  } catch (e) {
    counter.destroy();
    await written?.catch(() => undefined);
    throw e;
  }
}

/** Any other source: the connector's row stream (bounded memory), written as CSV in the values' canonical text. */
async function streamThrough(
  connector: Connector,
  sql: string,
  open: (columns: ResultColumn[]) => Promise<Writable>,
  signal: AbortSignal,
  progress: (rows: number) => void,
): Promise<number> {
  const stream = await connector.openStream(sql, [], { signal, readOnly: true });
  let rows = 0;
  try {
    const columns = stream.columns;
    const out = await open(columns);
    // A write error (the loader gone) surfaces at the next drain or at the end.
    let writeError: unknown;
    out.on('error', (e) => (writeError = e));
    const format = columns.map((col) => csvFormatter(col.primitive_type));
    const width = columns.length;
    let buf = '';
    for await (const row of stream) {
      let line = '';
      for (let i = 0; i < width; i++) {
        if (i) line += ',';
        const v = row[i];
        if (v !== null && v !== undefined) line += format[i](v);
      }
      buf += line + '\n';
      rows++;
      if (buf.length > 1 << 20) {
        if (writeError) throw writeError;
        if (!out.write(buf)) await Promise.race([once(out, 'drain'), once(out, 'close')]);
        buf = '';
        progress(rows);
      }
    }
    if (writeError) throw writeError;
    if (buf) out.write(buf);
    return rows;
  } finally {
    await stream.close();
  }
}

/**
 * A table's declared column types (numeric(12,2) ...): a result column says only "numeric", and an exact decimal
 * must stay exact in the extract (a sum over DOUBLE would differ from the source's in the last digits).
 */
async function declaredTypes(connector: Connector, object: DatasetObject): Promise<Map<string, string>> {
  if (object.kind !== 'table' || !object.table) return new Map();
  try {
    const cols = await connector.listColumns(object.schema ?? '', object.table);
    return new Map(cols.map((c) => [c.name, c.db_type]));
  } catch {
    return new Map();
  }
}

function decimalOf(dbType: string | undefined): string | null {
  const m = dbType && /^(?:numeric|decimal)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)/i.exec(dbType);
  if (!m) return null;
  const [p, s] = [Number(m[1]), Number(m[2])];
  return p >= 1 && p <= 38 && s <= p ? `DECIMAL(${p},${s})` : null;
}

function duckdbType(col: ResultColumn): string {
  if (col.primitive_type === 'integer' && /unsigned|uint64|uint128|int128|int256/i.test(col.db_type)) return 'HUGEINT';
  return DUCKDB_TYPES[col.primitive_type];
}

/** A value as one CSV field: strings always quoted (an empty string is not NULL), the rest in canonical text. */
function csvFormatter(type: PrimitiveType): (v: unknown) => string {
  switch (type) {
    case 'integer':
    case 'float':
    case 'boolean':
    case 'date':
    case 'datetime':
      return (v) => (typeof v === 'string' && /[",\n\r]/.test(v) ? quoteCsv(v) : String(v));
    default:
      return (v) => quoteCsv(typeof v === 'string' ? v : JSON.stringify(v));
  }
}

function quoteCsv(s: string): string {
  return s.includes('"') ? `"${s.replaceAll('"', '""')}"` : `"${s}"`;
}

/** The extract's maximum as a literal of the source's dialect; null (no bound) when the extract holds no rows. */
function incrementalLiteral(dialect: Dialect, max: unknown, text: unknown): string | null {
  if (max === null || max === undefined) return null;
  if (typeof max === 'bigint') return max.toString();
  if (typeof max === 'number') return escapeLiteral(dialect, max);
  // Dates and timestamps as DuckDB prints them ('2024-01-02', '2024-01-02 10:00:00.5'), which every source reads.
  return escapeLiteral(dialect, String(text));
}
