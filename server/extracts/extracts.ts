import path from 'node:path';
import { readdir, rm, stat } from 'node:fs/promises';
import { ConnectorError, type Connector } from '../../adapters/sources';
import type { AppDeps } from '../app/deps';
import { AppError, badRequest } from '../kernel/errors';
import type { DatasetModel } from '../query/compile/dataset-model';
import { MSG } from './messages';

/*
 * Where a materialised dataset's data lives and how the query engine reaches it (server/query/run picks the extract
 * connection here). The extract is one DuckDB file per dataset under DATA_DIR/extracts, holding one table per dataset
 * object (o_<objectId>) with the columns of the object's fields. A run writes a new file beside it and renames it over
 * the old one when complete (server/extracts/pull.ts): a reader holds the file it opened, a new read opens the new one,
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
 * Removes every file of a dataset's extract and closes this node's connection to it: called once the dataset is
 * deleted or back on its source (live), when nothing reads the extract any more. Never fails the caller, whose change
 * is already committed: a file left behind (another node still writing it) goes with the sweep of server/extracts.
 */
export async function removeExtract(deps: AppDeps, datasetId: number): Promise<void> {
  try {
    await deps.connectors.release(`extract:${datasetId}`);
    const dir = path.join(deps.config.dataDir, EXTRACTS_DIR);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => extractFileOwner(n) === datasetId);
    await Promise.all(names.map((n) => rm(path.join(dir, n), { force: true })));
  } catch (e) {
    console.error(`[extracts] files of dataset ${datasetId} not removed:`, e instanceof Error ? e.message : e);
  }
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
