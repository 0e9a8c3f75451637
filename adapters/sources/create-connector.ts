import { ClickHouseConnector } from './clickhouse/connector';
import { FileConnector } from './file/connector';
import { isSourceKind } from './kinds';
import { MysqlConnector } from './mysql/connector';
import { PostgresConnector } from './postgresql/connector';
import { ConnectorError, type Connector, type ConnectorOptions, type SourceKind, type SourceSettings } from './types';

/** A new connector for the settings; nothing connects until the first call. Close it when done. */
export function createConnector(kind: SourceKind, settings: SourceSettings, options?: ConnectorOptions): Connector {
  if (!isSourceKind(kind)) throw new ConnectorError(`Неизвестный тип источника: ${String(kind)}`, 'settings');
  switch (kind) {
    case 'postgresql':
      return new PostgresConnector(settings, options);
    case 'mysql':
      return new MysqlConnector(settings, options);
    case 'clickhouse':
      return new ClickHouseConnector(settings, options);
    case 'file':
      return new FileConnector(settings, options);
  }
}
