import { and, eq, sql } from 'drizzle-orm';
import { ConnectorError, type Connector, type ResultColumn } from '../../adapters/sources';
import type { Db } from '../../db/client';
import { dataSourceQueries } from '../../db/schema/data-sources';

/*
 * Runs SQL console queries in the background of the API node that accepted them.
 *
 * Several API nodes share one database, and a cancel or a poll may land on any of them. So everything a caller can
 * observe is in data_source_queries: the state, the stored result, and a `cancel_requested` flag. The running node
 * beats every HEARTBEAT_MS (`heartbeat_at`) and reads the flag in the same statement: a cancel made on another node
 * reaches the query within one beat, and the connector then stops it on the source server (pg_cancel_backend,
 * KILL QUERY, ClickHouse KILL QUERY, DuckDB interrupt). A cancel on the same node aborts at once. A query whose node
 * died stops beating; readers report it failed after STALE_AFTER_MS.
 */

export const MAX_STORED_ROWS = 10_000;
/** A result is also cut at this much JSON, whatever the row count (wide rows, long texts). */
const MAX_STORED_BYTES = 16 * 1024 * 1024;
const QUERY_TIMEOUT_MS = 10 * 60_000;
export const HEARTBEAT_MS = 400;
export const STALE_AFTER_MS = 15_000;
/** Older queries of a source keep their history line but drop their stored rows. */
const RESULTS_KEPT_PER_SOURCE = 20;

export type QueryState = 'running' | 'finished' | 'failed' | 'cancelled';

interface LocalRun {
  sourceId: number;
  controller: AbortController;
  done: Promise<void>;
}

/** A cell as JSON can hold it (connectors already normalise; this is the last guard before jsonb). */
function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return `\\x${Buffer.from(v).toString('hex')}`;
  if (v === undefined) return null;
  return v;
}

interface Outcome {
  state: Exclude<QueryState, 'running'>;
  error: string | null;
  columns: ResultColumn[] | null;
  rows: unknown[][] | null;
  rowCount: number | null;
  truncated: boolean;
}

async function execute(
  connector: Connector,
  text: string,
  params: unknown[],
  limit: number,
  signal: AbortSignal,
): Promise<Outcome> {
  try {
    const stream = await connector.openStream(text, params, { signal, timeoutMs: QUERY_TIMEOUT_MS, limit: limit + 1 });
    const rows: unknown[][] = [];
    let bytes = 0;
    let truncated = false;
    try {
      for await (const raw of stream) {
        if (rows.length >= limit) {
          truncated = true;
          break;
        }
        const row = raw.map(jsonSafe);
        bytes += JSON.stringify(row).length;
        if (bytes > MAX_STORED_BYTES) {
          truncated = true;
          break;
        }
        rows.push(row);
      }
    } finally {
      await stream.close();
    }
    return { state: 'finished', error: null, columns: stream.columns, rows, rowCount: rows.length, truncated };
  } catch (err) {
    const empty = { columns: null, rows: null, rowCount: null, truncated: false };
    if (signal.aborted || (err instanceof ConnectorError && err.kind === 'cancelled')) {
      return { state: 'cancelled', error: 'Запрос отменён', ...empty };
    }
    if (err instanceof ConnectorError)
      return { state: 'failed', error: err.message || 'Ошибка выполнения запроса', ...empty };
    return { state: 'failed', error: 'Внутренняя ошибка сервера', ...empty };
  }
}

/**
 * The SQL console queries this app runs (deps.localQueries): what a cancel on this node aborts at once, and what the
 * app aborts when it closes. Each app has its own, so closing one app (a test app) never touches another's queries.
 */
export class LocalQueries {
  private readonly runs = new Map<string, LocalRun>();

  constructor(private readonly db: Db) {}

  /** Starts a query already recorded as running; resolves when its outcome is stored. */
  start(run: {
    queryId: string;
    sourceId: number;
    connector: Connector;
    sql: string;
    params: unknown[];
    limit: number;
  }): Promise<void> {
    const db = this.db;
    const controller = new AbortController();
    const beat = setInterval(() => {
      db.update(dataSourceQueries)
        .set({ heartbeatAt: sql`now()` })
        .where(and(eq(dataSourceQueries.id, run.queryId), eq(dataSourceQueries.state, 'running')))
        .returning({ cancel: dataSourceQueries.cancelRequested })
        .then(([r]) => {
          // Gone (source deleted) or cancelled from any node.
          if (!r || r.cancel) controller.abort();
        })
        .catch(() => undefined);
    }, HEARTBEAT_MS);
    beat.unref?.();

    const done = (async () => {
      let outcome: Outcome;
      try {
        outcome = await execute(run.connector, run.sql, run.params, run.limit, controller.signal);
      } finally {
        clearInterval(beat);
      }
      await db
        .update(dataSourceQueries)
        .set({ ...outcome, finishedAt: sql`now()` })
        .where(and(eq(dataSourceQueries.id, run.queryId), eq(dataSourceQueries.state, 'running')))
        .catch(() => undefined);
      await pruneResults(db, run.sourceId).catch(() => undefined);
    })().finally(() => this.runs.delete(run.queryId));
    this.runs.set(run.queryId, { sourceId: run.sourceId, controller, done });
    return done;
  }

  /** Aborts the query if this node runs it; true when it did. */
  abort(queryId: string): boolean {
    const run = this.runs.get(queryId);
    if (!run) return false;
    run.controller.abort();
    return true;
  }

  /** Waits up to `ms` for a query of this node to store its outcome; false when it is not here or still running. */
  async waitFor(queryId: string, ms: number): Promise<boolean> {
    const run = this.runs.get(queryId);
    if (!run) return false;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      run.done.then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
    clearTimeout(timer);
    return finished;
  }

  /** Aborts every query of a source on this node (the source is being deleted). */
  abortOf(sourceId: number): void {
    for (const run of this.runs.values()) if (run.sourceId === sourceId) run.controller.abort();
  }

  /** Aborts everything (app close) and waits for the outcomes to be stored. */
  async abortAll(): Promise<void> {
    const runs = [...this.runs.values()];
    for (const run of runs) run.controller.abort();
    await Promise.allSettled(runs.map((r) => r.done));
  }
}

/** Keeps the stored rows of the newest queries of a source only: the history stays, old results go. */
async function pruneResults(db: Db, sourceId: number): Promise<void> {
  await db.execute(sql`
    update ${dataSourceQueries} set "rows" = null
    where ${dataSourceQueries.dataSourceId} = ${sourceId} and ${dataSourceQueries.rows} is not null
      and ${dataSourceQueries.id} not in (
        select id from ${dataSourceQueries} where ${dataSourceQueries.dataSourceId} = ${sourceId}
        order by ${dataSourceQueries.startedAt} desc limit ${RESULTS_KEPT_PER_SOURCE})`);
}
