import type { Dialect, SourceKind } from './types';

export interface SourceKindInfo {
  type: SourceKind;
  /** Russian display name for the interface dictionary and the source-type list. */
  name: string;
  dialect: Dialect;
  /** Pre-filled port (the spec: "The port is pre-filled by source type"); null for files. */
  default_port: number | null;
  /** ClickHouse is reached over HTTP; its native port is shown but the connector uses this one. */
  default_http_port: number | null;
  supports: { ssl: boolean; ssh: boolean; initial_sql: boolean };
}

export const SOURCE_KINDS: readonly SourceKindInfo[] = [
  {
    type: 'postgresql',
    name: 'PostgreSQL',
    dialect: 'postgresql',
    default_port: 5432,
    default_http_port: null,
    supports: { ssl: true, ssh: true, initial_sql: true },
  },
  {
    type: 'mysql',
    name: 'MySQL / MariaDB',
    dialect: 'mysql',
    default_port: 3306,
    default_http_port: null,
    supports: { ssl: true, ssh: true, initial_sql: true },
  },
  {
    type: 'clickhouse',
    name: 'ClickHouse',
    dialect: 'clickhouse',
    default_port: 9000,
    default_http_port: 8123,
    supports: { ssl: true, ssh: true, initial_sql: true },
  },
  {
    type: 'file',
    name: 'Файл',
    dialect: 'duckdb',
    default_port: null,
    default_http_port: null,
    supports: { ssl: false, ssh: false, initial_sql: false },
  },
];

export function isSourceKind(v: unknown): v is SourceKind {
  return SOURCE_KINDS.some((k) => k.type === v);
}

export function sourceKindInfo(kind: SourceKind): SourceKindInfo {
  const info = SOURCE_KINDS.find((k) => k.type === kind);
  if (!info) throw new Error(`unknown source kind ${kind}`);
  return info;
}
