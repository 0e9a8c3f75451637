import type { PrimitiveType } from '../types';
import { textValueConverter } from '../values';

export interface PgTypeInfo {
  name: string;
  primitive: PrimitiveType;
}

// Built-in type OIDs (pg_type.dat); these never change between PostgreSQL versions.
const BUILTIN: Record<number, PgTypeInfo> = {
  16: { name: 'boolean', primitive: 'boolean' },
  17: { name: 'bytea', primitive: 'unknown' },
  18: { name: 'char', primitive: 'string' },
  19: { name: 'name', primitive: 'string' },
  20: { name: 'bigint', primitive: 'integer' },
  21: { name: 'smallint', primitive: 'integer' },
  23: { name: 'integer', primitive: 'integer' },
  25: { name: 'text', primitive: 'string' },
  26: { name: 'oid', primitive: 'integer' },
  114: { name: 'json', primitive: 'string' },
  142: { name: 'xml', primitive: 'string' },
  650: { name: 'cidr', primitive: 'string' },
  700: { name: 'real', primitive: 'float' },
  701: { name: 'double precision', primitive: 'float' },
  705: { name: 'unknown', primitive: 'string' },
  790: { name: 'money', primitive: 'string' },
  829: { name: 'macaddr', primitive: 'string' },
  869: { name: 'inet', primitive: 'string' },
  1042: { name: 'character', primitive: 'string' },
  1043: { name: 'character varying', primitive: 'string' },
  1082: { name: 'date', primitive: 'date' },
  1083: { name: 'time without time zone', primitive: 'string' },
  1114: { name: 'timestamp without time zone', primitive: 'datetime' },
  1184: { name: 'timestamp with time zone', primitive: 'datetime' },
  1186: { name: 'interval', primitive: 'string' },
  1266: { name: 'time with time zone', primitive: 'string' },
  1560: { name: 'bit', primitive: 'string' },
  1562: { name: 'bit varying', primitive: 'string' },
  1700: { name: 'numeric', primitive: 'float' },
  2950: { name: 'uuid', primitive: 'string' },
  3802: { name: 'jsonb', primitive: 'string' },
};

export function builtinPgType(oid: number): PgTypeInfo | undefined {
  return BUILTIN[oid];
}

/** A type that is not built in (enum, domain, extension type), from its pg_type row. */
export function pgTypeFromCatalog(row: { typname: string; typcategory: string; base_oid: number }): PgTypeInfo {
  const base = BUILTIN[row.base_oid];
  if (base) return { name: row.typname, primitive: base.primitive };
  const primitive: PrimitiveType = row.typcategory === 'S' || row.typcategory === 'E' ? 'string' : 'unknown';
  return { name: row.typname, primitive };
}

/**
 * Turns the driver's raw text value (all type parsers are disabled) into the common value form. timestamptz text
 * carries its offset (+03, +05:30) and is converted to UTC; a plain timestamp is kept as written.
 */
export function pgValueConverter(primitive: PrimitiveType): (v: string | null) => unknown {
  return textValueConverter(primitive);
}
