import path from 'node:path';
import { readdir, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DbOrTx } from '../../db/client';
import { ConnectorError, type Connector } from '../../adapters/sources';
import type { AppDeps } from '../app/deps';
import { AppError, badRequest } from '../kernel/errors';
import type { DatasetModel } from '../query/compile/dataset-model';
import { EXTRACT_RUN } from './kinds';
import { MSG } from './messages';
import { cancelRuns, lockActiveRuns, type ExtractRunRow } from './store';

/*
 * Where a materialised dataset's data lives and how the query engine reaches it (server/query/run picks the extract
 * connection here). The extract is one DuckDB file per dataset under DATA_DIR/extracts, holding one table per dataset
 * object (o_<objectId>) with the columns of the object's fields. A run writes a new file beside it and renames it over
 * the old one when complete (server/etl/pull.ts): a reader holds the file it opened, a new read opens the new one,
 * nobody sees a half-loaded extract. On shared storage every API node sees the same file.
 */

export const EXTRACTS_DIR = 'extracts';

export const extractFileOf = (dataDir: string, datasetId: number) =>
  path.join(dataDir, EXTRACTS_DIR, `dataset-${datasetId}.duckdb`);

/**
 * The dataset a file of the extracts folder belongs to: its extract (dataset-<id>.duckdb), the extract's WAL, and the
 * partial files of its runs with their WAL and pipes (dataset-<id>.duckdb.<run>.part...). Null for any other name.
 */
export function extractFileOwner(name: string): number | null {
  const m = /^dataset-(\d+)\.duckdb(\..*)?$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Removes every file of the datasets' extracts and closes this node's connections to them: called once the datasets
 * are deleted or back on their source (live), when nothing reads the extracts any more. Never fails the caller, whose
 * change is already committed: a file left behind (another node still writing it) goes with the sweep of
 * server/etl/run-job.ts (sweepLostRuns).
 */
async function removeExtracts(deps: AppDeps, datasetIds: number[]): Promise<void> {
  if (!datasetIds.length) return;
  const ids = new Set(datasetIds);
  try {
    await Promise.all(datasetIds.map((id) => deps.connectors.release(`extract:${id}`)));
    const dir = path.join(deps.config.dataDir, EXTRACTS_DIR);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => ids.has(extractFileOwner(n) ?? 0));
    await Promise.all(names.map((n) => rm(path.join(dir, n), { force: true })));
  } catch (e) {
    console.error(
      `[extracts] files of datasets ${datasetIds.join(', ')} not removed:`,
      e instanceof Error ? e.message : e,
    );
  }
}

/** What a delete or a switch to live ended in its transaction, for stopRunsAfter once it commits. */
export interface EndedRuns {
  datasetIds: number[];
  runs: ExtractRunRow[];
}

/**
 * In the transaction that deletes datasets (DELETE /api/dataset/{id}, DELETE /api/workspaces/{id}) or puts one back on
 * its source (PUT /api/dataset/{id} live: true): locks the datasets, so no run of theirs starts until it commits (a
 * start locks its dataset's row), and ends their queued and running runs. A delete takes them along by cascade; a
 * switch to live cancels them, saying why. Either way their workers learn it through the database, as they learn a
 * cancel: the heartbeat of a running run, on whichever node runs it, finds it no longer running and stops the pull
 * and its query at the source. No run is left pulling for a dataset that is gone or live.
 */
export async function endRunsOf(
  tx: DbOrTx,
  of: { datasetIds: number[] } | { workspaceId: number },
  because: 'deleted' | 'live',
): Promise<EndedRuns> {
  const { datasetIds, runs } = await lockActiveRuns(tx, of);
  if (because === 'live' && runs.length)
    await cancelRuns(
      tx,
      runs.map((r) => r.id),
      MSG.cancelledLive,
    );
  return { datasetIds, runs };
}

/** How long the caller waits for the ended runs' workers to stop before it answers (they stop on their own after). */
const STOP_WAIT_MS = 10_000;

/**
 * Once the transaction of endRunsOf committed: queued runs' jobs are taken off the queue (a waiting job would hold
 * the dataset's singleton key), running ones are stopped at once when this node runs them (any other node within its
 * heartbeat), and the caller waits for their jobs to end, so their queries at the source are over when it answers.
 * Then the datasets' extract files go, partial files of the stopped runs included. Never fails the caller.
 */
export async function stopRunsAfter(deps: AppDeps, ended: EndedRuns): Promise<void> {
  const running: string[] = [];
  for (const run of ended.runs) {
    if (!run.bossJobId) continue;
    if (run.state === 'queued') await deps.jobs.cancel(EXTRACT_RUN, run.bossJobId).catch(() => undefined);
    else {
      deps.jobs.abortLocal(run.bossJobId);
      running.push(run.bossJobId);
    }
  }
  const until = Date.now() + STOP_WAIT_MS;
  for (const job of running) {
    while (Date.now() < until) {
      const state = await deps.jobs.stateOf(EXTRACT_RUN, job).catch(() => null);
      if (state !== 'active') break;
      await sleep(100);
    }
  }
  await removeExtracts(deps, ended.datasetIds);
}

/** The extract's table of a dataset object. */
export const extractTableOf = (objectId: number) => `o_${objectId}`;

export interface OpenExtract {
  /** Null before the first synchronisation: a query answers 400 (compiling, e.g. a widget save, still works). */
  connector: Connector | null;
  /** Changes with every swapped-in load: the result cache never serves rows of an older extract. */
  dataKey: string;
}

/** What a read of a materialised dataset answers before its first synchronisation. */
export const notSynchronised = (datasetId: number) =>
  badRequest(
    `Датасет материализован, а его данные ещё не загружены: нужна первая синхронизация (POST /api/datasets/${datasetId}/extracts)`,
  );

/** DuckDB's words for a column or a table the extract does not have: the column, or the object id of the table. */
const MISSING_COLUMN = /does not have a column named "([^"]+)"|Referenced column "([^"]+)" not found/;
const MISSING_TABLE = /Table with name o_(\d+) does not exist/;

/**
 * A read of an extract loaded before the dataset gained a field or an object (`model` is the extract's model) fails
 * in DuckDB's binder: said as a 400 naming the field or object and what to do, DuckDB's text kept only as the cause
 * (logged). Any other failure is answered as it was.
 */
export function staleExtractError(model: DatasetModel, e: unknown): unknown {
  if (!(e instanceof ConnectorError) || e.kind !== 'query') return e;
  const column = MISSING_COLUMN.exec(e.message);
  if (column) {
    const name = column[1] ?? column[2];
    const fields = model.fields.filter((f) => f.kind === 'physical' && f.column === name).map((f) => `«${f.name}»`);
    const named = fields.length ? [...new Set(fields)].join(', ') : `«${name}»`;
    return new AppError('bad_request', MSG.staleField(model.id, named), { cause: e });
  }
  const table = MISSING_TABLE.exec(e.message);
  if (table) {
    const object = model.objects.find((o) => o.id === Number(table[1]));
    return new AppError('bad_request', MSG.staleObject(model.id, `«${object?.name ?? table[1]}»`), { cause: e });
  }
  return e;
}

/**
 * The extract of a materialised dataset (POST /api/widget/{id}/data and every other read of a dataset with
 * live = false). Before its first synchronisation there is none, and running a query is a 400 with what to do.
 */
export async function openExtract(deps: AppDeps, datasetId: number): Promise<OpenExtract> {
  const file = extractFileOf(deps.config.dataDir, datasetId);
  const st = await stat(file).catch(() => null);
  if (!st) return { connector: null, dataKey: `extract:${datasetId}:none` };
  const connector = deps.connectors.get(`extract:${datasetId}`, 'file', { file: { duckdb_path: file, tables: [] } });
  return { connector, dataKey: `extract:${datasetId}:${st.ino}:${st.mtimeMs}` };
}

const extractModels = new WeakMap<DatasetModel, DatasetModel>();

/**
 * The model as the extract holds it: each object is its extract table (a saved SQL query too: its result was copied),
 * fields keep their columns. Same fields, relations, filters and ids, so RLS, CLS and plans apply unchanged.
 */
export function extractModelOf(model: DatasetModel): DatasetModel {
  let mapped = extractModels.get(model);
  if (!mapped) {
    mapped = {
      ...model,
      objects: model.objects.map((o) => ({
        ...o,
        kind: 'table' as const,
        schema: null,
        table: extractTableOf(o.id),
        sql: null,
      })),
    };
    extractModels.set(model, mapped);
  }
  return mapped;
}
