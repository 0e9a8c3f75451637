import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { stat } from 'node:fs/promises';
import { batchRowStream, ConnectorBase } from '../connector-base';
import { errorMessage } from '../driver-errors';
import { RunControl } from '../run-control';
import type { ColumnInfo, QueryOptions, ResultColumn, RowStream, TableInfo } from '../types';
import { ConnectorError } from '../types';
import { duckdbCatalogPrimitive, duckdbParam, duckdbPrimitive, duckdbValueConverter } from './types';

interface OpenFile {
  instance: DuckDBInstance;
  /** Identity of the file when opened: a replaced upload is a new inode (import renames a new file in). */
  ino: number;
  mtimeMs: number;
  active: number;
  retired: boolean;
}

/**
 * A file source: the DuckDB database its upload was imported into, opened read-only (many readers, the
 * importer is the only writer and works on a temp file). Each query gets its own DuckDB connection, so queries
 * run in parallel and one can be interrupted alone. QueryOptions.readOnly needs nothing more here: every query
 * already is (a write fails with DuckDB's own read-only error).
 */
export class FileConnector extends ConnectorBase {
  readonly kind = 'file' as const;
  readonly dialect = 'duckdb' as const;
  private current: OpenFile | undefined;
  private opening: Promise<OpenFile> | undefined;

  private get path(): string {
    const path = this.settings.file?.duckdb_path;
    if (!path) throw new ConnectorError('У файлового источника не указан файл данных', 'settings');
    return path;
  }

  async check(): Promise<void> {
    await this.withConnection(async (c) => {
      await c.run('SELECT 1');
      for (const table of this.settings.file?.tables ?? []) {
        const found = await c.runAndReadAll(
          `SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_name = $1`,
          [table],
        );
        if (found.currentRowCount === 0)
          throw new ConnectorError(`В файле источника нет таблицы «${table}»`, 'settings');
      }
    });
  }

  async listSchemas(): Promise<string[]> {
    const rows = await this.catalog(
      `SELECT schema_name FROM information_schema.schemata
       WHERE catalog_name = current_database() AND schema_name NOT IN ('information_schema', 'pg_catalog')
       ORDER BY schema_name`,
      [],
    );
    return rows.map((r) => String(r[0]));
  }

  async listTables(schema: string): Promise<TableInfo[]> {
    const rows = await this.catalog(
      `SELECT table_name, table_type FROM information_schema.tables
       WHERE table_catalog = current_database() AND table_schema = $1 ORDER BY table_name`,
      [schema],
    );
    return rows.map((r) => ({ schema, name: String(r[0]), kind: String(r[1]) === 'VIEW' ? 'view' : 'table' }));
  }

  async listColumns(schema: string, table: string): Promise<ColumnInfo[]> {
    const rows = await this.catalog(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    );
    if (rows.length === 0) throw new ConnectorError(`Таблица «${schema}.${table}» не найдена`, 'query');
    return rows.map((r) => ({
      name: String(r[0]),
      db_type: String(r[1]),
      primitive_type: duckdbCatalogPrimitive(String(r[1])),
      nullable: String(r[2]) === 'YES',
    }));
  }

  async openStream(sql: string, params: unknown[], opts: QueryOptions = {}): Promise<RowStream> {
    this.assertOpen();
    const control = new RunControl(opts);
    let file: OpenFile | undefined;
    let conn: DuckDBConnection | undefined;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      control.dispose();
      conn?.closeSync();
      if (file) this.leave(file);
    };
    try {
      control.throwIfStopped();
      file = await this.enter();
      conn = await file.instance.connect();
      const c = conn;
      control.onCancel(() => (released ? undefined : c.interrupt()));
      const result = await c.stream(sql, params.map(duckdbParam));
      const types = result.columnTypes();
      const columns: ResultColumn[] = result.columnNames().map((name, i) => ({
        name,
        db_type: types[i].toString(),
        primitive_type: duckdbPrimitive(types[i]),
      }));
      const converters = types.map(duckdbValueConverter);
      const next = async (): Promise<unknown[][] | null> => {
        try {
          control.throwIfStopped();
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) return null;
          return chunk.getRows().map((row) => row.map((v, i) => converters[i](v)));
        } catch (err) {
          throw control.error(err, mapError);
        }
      };
      return batchRowStream(columns, next, release, opts.limit);
    } catch (err) {
      const e = control.error(err, mapError);
      await release();
      throw e;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = this.current ?? (await this.opening?.catch(() => undefined));
    this.current = undefined;
    if (open) {
      open.retired = true;
      if (open.active === 0) open.instance.closeSync();
    }
  }

  private async catalog(sql: string, params: unknown[]): Promise<unknown[][]> {
    return this.withConnection(async (c) => {
      const reader = await c.runAndReadAll(sql, params.map(duckdbParam));
      return reader.getRowsJS() as unknown[][];
    });
  }

  private async withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    this.assertOpen();
    const file = await this.enter();
    const conn = await file.instance.connect();
    try {
      return await fn(conn);
    } catch (err) {
      throw mapError(err);
    } finally {
      conn.closeSync();
      this.leave(file);
    }
  }

  /** The open database, re-opened when the file on disk was replaced by a new import. */
  private async enter(): Promise<OpenFile> {
    const path = this.path;
    let st;
    try {
      st = await stat(path);
    } catch {
      throw new ConnectorError('Файл данных источника не найден: загрузите файл заново', 'settings');
    }
    const cur = this.current;
    if (cur && cur.ino === st.ino && cur.mtimeMs === st.mtimeMs) {
      cur.active++;
      return cur;
    }
    if (!this.opening) {
      const opening = (async () => {
        let instance: DuckDBInstance;
        try {
          // No file system access beyond the database itself: SQL console users must not read_csv('/etc/...'),
          // ATTACH or COPY TO files of the server (it cannot be switched back on while the database is open).
          instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY', enable_external_access: 'false' });
        } catch (err) {
          throw new ConnectorError(`Не удалось открыть файл данных источника: ${errorMessage(err)}`, 'settings', {
            cause: err,
          });
        }
        const opened: OpenFile = { instance, ino: st.ino, mtimeMs: st.mtimeMs, active: 0, retired: false };
        const old = this.current;
        this.current = opened;
        if (old) {
          old.retired = true;
          if (old.active === 0) old.instance.closeSync();
        }
        return opened;
      })();
      this.opening = opening;
      opening
        .finally(() => {
          if (this.opening === opening) this.opening = undefined;
        })
        .catch(() => {});
    }
    const opened = await this.opening;
    opened.active++;
    return opened;
  }

  private leave(file: OpenFile): void {
    file.active--;
    if (file.retired && file.active === 0) file.instance.closeSync();
  }
}

function mapError(err: unknown): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const message = errorMessage(err);
  if (/INTERRUPT/i.test(message)) return new ConnectorError(message, 'cancelled', { cause: err });
  return new ConnectorError(message, 'query', { cause: err });
}
