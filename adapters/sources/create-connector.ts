import { isSourceKind } from './kinds';
import { PostgresConnector } from './postgresql/connector';
import { ResolvingConnector } from './resolving-connector';
import { ConnectorError, type Connector, type ConnectorOptions, type SourceKind, type SourceSettings } from './types';

/** A new connector for the settings; nothing connects until the first call. Close it when done. */
export function createConnector(kind: SourceKind, settings: SourceSettings, options?: ConnectorOptions): Connector {
  if (!isSourceKind(kind)) throw new ConnectorError(`Неизвестный тип источника: ${String(kind)}`, 'settings');
  switch (kind) {
    case 'postgresql':
      return new PostgresConnector(settings, options);
    // The other drivers (mysql2, @clickhouse/client, DuckDB) load on the first call of a source of their kind, not
    // with the server: their constructors do no I/O and throw nothing, so building them late changes nothing else.
    case 'mysql':
      return lazily(
        kind,
        'mysql',
        async () => new (await import('./mysql/connector')).MysqlConnector(settings, options),
      );
    case 'clickhouse':
      return lazily(
        kind,
        'clickhouse',
        async () => new (await import('./clickhouse/connector')).ClickHouseConnector(settings, options),
      );
    case 'file':
      return lazily(
        kind,
        'duckdb',
        async () => new (await import('./file/connector')).FileConnector(settings, options),
      );
  }
}

/** One connector, built on the first call and reused by every later one (a rejected import is retried). */
function lazily(kind: SourceKind, dialect: Connector['dialect'], build: () => Promise<Connector>): Connector {
  let built: Promise<Connector> | undefined;
  return new ResolvingConnector(kind, dialect, () => {
    built ??= build().catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built;
  });
}
