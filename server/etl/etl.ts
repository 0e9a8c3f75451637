import path from 'node:path';
import { readdir, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DbOrTx } from '../../db/client';
import { ConnectorError, type Connector } from '../../adapters/sources';
import type { AppDeps } from '../app/deps';
import { AppError, badRequest } from '../kernel/errors';
import type { DatasetModel } from '../query/compile/dataset-model';
import { StorageNotFoundError } from '../storage/object-storage';
import { EXTRACTS_DIR, extractFileOwner } from './files';
import { EXTRACT_RUN } from './kinds';
import { dropLoadsOf, extractPrefixOf } from './loads';
import { MSG } from './messages';
import { closeLoadsOf, connectorOfLoad, currentLoadOf, extractLoadChanged, extractLoadCommitted } from './open-load';
import { cancelRuns, lockActiveRuns, type ExtractRunRow } from './store';

/*
 * Where a materialised dataset's data lives and how the query engine reaches it (server/query/run picks the extract
 * connection here). The extract is a DuckDB file holding one table per dataset object (o_<objectId>) with the
 * columns of the object's fields. A run builds a new file under DATA_DIR/extracts, stores it as a new load in the
 * storage module (extracts/dataset-<id>/<load id>.duckdb, server/etl/loads.ts) and makes it current with its success:
 * every node opens the current load from its bounded local cache (server/etl/open-load.ts), a reader keeps the load
 * it opened, a new read opens the new one, nobody sees a half-loaded extract.
 */

/**
 * Removes every load of the datasets' extracts from storage, the local files of this node, and closes this node's
 * connections to them: called once the datasets are deleted or back on their source (live), when nothing reads the
 * extracts any more. Never fails the caller, whose change is already committed: what is left behind (another node
 * still writing a partial file, storage unreachable) goes with the sweep of server/etl/run-job.ts (sweepLostRuns).
 */
async function removeExtracts(deps: AppDeps, datasetIds: number[]): Promise<void> {
  if (!datasetIds.length) return;
  const ids = new Set(datasetIds);
  try {
    for (const id of datasetIds) extractLoadCommitted(deps, id);
    await closeLoadsOf(deps, datasetIds);
    for (const id of datasetIds) await deps.storage.deletePrefix(extractPrefixOf(id));
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
 * and its query at the source. No run is left pulling for a dataset that is gone or live. The datasets' loads are
 * forgotten in the same transaction (a delete takes them by cascade): a dataset made materialised again waits for a
 * first synchronisation instead of serving the old data.
 */
export async function endRunsOf(
  tx: DbOrTx,
  of: { datasetIds: number[] } | { workspaceId: number },
  because: 'deleted' | 'live',
): Promise<EndedRuns> {
  const { datasetIds, runs } = await lockActiveRuns(tx, of);
  await dropLoadsOf(tx, datasetIds);
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
 * Then the datasets' extracts go, from storage and from this node (partial files of the stopped runs included), and
 * readers on other nodes see no load within READ_DECISION_TTL_MS (or at once, once extractLoadChanged is broadcast).
 * Never fails the caller.
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
 * live = false): the current load, opened read-only from this node's copy. Before its first synchronisation there is
 * none, and running a query is a 400 with what to do. The dataKey names the load, so no result cache of any node
 * serves rows of an older load.
 */
export async function openExtract(deps: AppDeps, datasetId: number): Promise<OpenExtract> {
  for (let attempt = 0; ; attempt++) {
    const load = await currentLoadOf(deps, datasetId);
    if (!load) return { connector: null, dataKey: `extract:${datasetId}:none` };
    try {
      return { connector: await connectorOfLoad(deps, datasetId, load), dataKey: `extract:${datasetId}:${load}` };
    } catch (e) {
      if (e instanceof StorageNotFoundError) {
        // The cached id named a load deleted since (superseded past its grace): asked again once.
        extractLoadChanged(deps, datasetId);
        if (attempt === 0) continue;
        throw MSG.loadMissing(datasetId);
      }
      throw new AppError('service_unavailable', MSG.storageUnavailable, { cause: e });
    }
  }
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
