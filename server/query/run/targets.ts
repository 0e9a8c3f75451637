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

const dataKeys = new WeakMap<DataSourceRow, string>();

/** The source's connector; its data key changes whenever the connection settings (or their secrets) change. */
function liveTarget(deps: AppDeps, row: DataSourceRow): ExecutableTarget {
  const connector = connectorForSource(deps, row);
  let dataKey = dataKeys.get(row);
  if (!dataKey) {
    const hash = createHash('sha256')
      .update(JSON.stringify([row.type, row.settings, row.secrets]))
      .digest('hex')
      .slice(0, 32);
    dataKey = `source:${row.id}:${hash}`;
    dataKeys.set(row, dataKey);
  }
  return {
    dialect: connector.dialect,
    dataKey,
    // A target only ever reads, whoever calls it.
    run: (sql, params, opts) => connector.query(sql, params, { ...opts, readOnly: true }),
    stream: (sql, params, opts) => connector.openStream(sql, params, { ...opts, readOnly: true }),
  };
}
