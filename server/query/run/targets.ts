import { createHash } from 'node:crypto';
import {
  sourceKindInfo,
  type QueryOptions,
  type QueryResult,
  type RowStream,
  type SourceKind,
} from '../../../adapters/sources';
import type { DbOrTx } from '../../../db/client';
import type { DatasetModel, QueryTarget } from '../compile/dataset-model';
import { connectorForSource, type DataSourceRow } from '../../data-sources/connection';
import { sourcesByIds } from '../../data-sources/views';
import type { AppDeps } from '../../app/deps';
import { datasetProblem } from '../compile/errors';
import type { Dialect } from '../expr';
import { notSynchronised, staleExtractError, type OpenExtract } from '../../etl/etl';
import { cacheSlot } from '../../kernel/app-caches';

/*
 * Where a compiled query runs. A live dataset runs on its data source's pooled connector. A materialised dataset
 * (live = false) runs on its DuckDB extract (server/etl/etl.ts): a target with dialect 'duckdb' whose dataKey
 * names the extract file and load, so the compiler and the cache need no change.
 */
export interface ExecutableTarget extends QueryTarget {
  run(sql: string, params: unknown[], opts: QueryOptions): Promise<QueryResult>;
  /** The same query read through the connector's cursor, batch by batch (file exports: server/query/read.ts streamData). */
  stream(sql: string, params: unknown[], opts: QueryOptions): Promise<RowStream>;
}

/** The data sources a dataset's objects live on, by id (one metadata query). */
export class DatasetSources {
  private constructor(
    readonly model: DatasetModel,
    private readonly rows: Map<number, DataSourceRow>,
    private readonly extract?: OpenExtract,
  ) {}

  /** The same sources with every query compiled for and run on the dataset's extract. */
  onExtract(model: DatasetModel, extract: OpenExtract): DatasetSources {
    return new DatasetSources(model, this.rows, extract);
  }

  static async load(db: DbOrTx, model: DatasetModel): Promise<DatasetSources> {
    const ids = [...new Set([...model.dataSourceIds, ...model.objects.map((o) => o.dataSourceId)])];
    return DatasetSources.of(model, await sourcesByIds(db, ids));
  }

  /** From rows the caller already read (e.g. together with the widget, in one query). */
  static of(model: DatasetModel, rows: DataSourceRow[]): DatasetSources {
    return new DatasetSources(model, new Map(rows.map((r) => [r.id, r])));
  }

  row(id: number): DataSourceRow {
    const row = this.rows.get(id);
    if (!row) throw datasetProblem(`Источник данных датасета не найден (id ${id})`);
    return row;
  }

  /** For the compiler: the dialect of a source, without connecting to it. */
  readonly dialectOf = (id: number): Dialect =>
    this.extract ? 'duckdb' : sourceKindInfo(this.row(id).type as SourceKind).dialect;

  /** The data key the source's target has (what its results are cached under), without making the target. */
  dataKey(deps: AppDeps, dataSourceId: number): string {
    return this.extract ? this.extract.dataKey : liveTarget(deps, this.row(dataSourceId)).dataKey;
  }

  target(deps: AppDeps, dataSourceId: number): ExecutableTarget {
    if (this.extract) {
      const { connector, dataKey } = this.extract;
      const model = this.model;
      const stale = (e: unknown) => Promise.reject(staleExtractError(model, e));
      return {
        dialect: 'duckdb',
        dataKey,
        run: (sql, params, opts) =>
          connector ? connector.query(sql, params, opts).catch(stale) : Promise.reject(notSynchronised(model.id)),
        stream: (sql, params, opts) =>
          connector ? connector.openStream(sql, params, opts).catch(stale) : Promise.reject(notSynchronised(model.id)),
      };
    }
    return liveTarget(deps, this.row(dataSourceId));
  }
}

/**
 * A live source's target by the row's text (id, kind, settings, stored secrets): source rows are read anew for most
 * requests, and a target made once per text keeps what making one costs (the settings' hash for the data key, the
 * secrets opened and the connector resolved on the first call: connectorForSource keeps them) out of every read.
 * Any change to the row is a new text, so a new target; the connector behind it still resolves on every call (a
 * driver switch or a closed pool applies at once). Per app, a few hundred at most.
 */
const liveTargets = cacheSlot('query.liveTargets', () => new LiveTargets());
const MAX_LIVE_TARGETS = 500;

/** By the row's text, and by the row object itself (a row cached with its widget comes back as the same object). */
class LiveTargets {
  private byText = new Map<string, ExecutableTarget>();
  private byRow = new WeakMap<DataSourceRow, ExecutableTarget>();

  forRow(row: DataSourceRow): ExecutableTarget | undefined {
    return this.byRow.get(row);
  }

  get(row: DataSourceRow, text: string): ExecutableTarget | undefined {
    const hit = this.byText.get(text);
    if (hit) this.byRow.set(row, hit);
    return hit;
  }

  set(row: DataSourceRow, text: string, target: ExecutableTarget): void {
    if (this.byText.size >= MAX_LIVE_TARGETS) this.byText.delete(this.byText.keys().next().value!);
    this.byText.set(text, target);
    this.byRow.set(row, target);
  }

  /** The cache bus drops everything (app-caches: a slot with delete and clear). */
  delete(): void {
    this.clear();
  }

  clear(): void {
    this.byText.clear();
    this.byRow = new WeakMap();
  }
}

const rowText = (row: DataSourceRow) => JSON.stringify([row.id, row.type, row.settings, row.secrets]);

/** The source's connector; its data key changes whenever the connection settings (or their secrets) change. */
function liveTarget(deps: AppDeps, row: DataSourceRow): ExecutableTarget {
  const cache = deps.caches.of(liveTargets);
  const known = cache.forRow(row);
  if (known) return known;
  const text = rowText(row);
  const hit = cache.get(row, text);
  if (hit) return hit;
  const connector = connectorForSource(deps, row);
  const target: ExecutableTarget = {
    dialect: connector.dialect,
    dataKey: dataKeyOf(row, text),
    // A target only ever reads, whoever calls it.
    run: (sql, params, opts) => connector.query(sql, params, { ...opts, readOnly: true }),
    stream: (sql, params, opts) => connector.openStream(sql, params, { ...opts, readOnly: true }),
  };
  // A file source's local copy is fetched on first use and may be fetched again later: its target is made each time.
  if ((row.settings as { file?: unknown } | null)?.file) return target;
  cache.set(row, text, target);
  return target;
}

function dataKeyOf(row: DataSourceRow, text: string): string {
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 32);
  return `source:${row.id}:${hash}`;
}
