import type { PrimitiveType } from '../types';
import {
  normaliseBinary,
  normaliseBoolean,
  normaliseDate,
  normaliseFloat,
  normaliseInteger,
  normaliseOther,
  normaliseTimestamp,
} from '../values';

// MySQL protocol column type codes (include/field_types.h).
const T = {
  DECIMAL: 0,
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  NULL: 6,
  TIMESTAMP: 7,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  TIME: 11,
  DATETIME: 12,
  YEAR: 13,
  NEWDATE: 14,
  VARCHAR: 15,
  BIT: 16,
  JSON: 245,
  NEWDECIMAL: 246,
  ENUM: 247,
  SET: 248,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  VAR_STRING: 253,
  STRING: 254,
  GEOMETRY: 255,
} as const;

const UNSIGNED_FLAG = 32;
const BINARY_CHARSET = 63;

const NAMES: Record<number, string> = {
  [T.DECIMAL]: 'decimal',
  [T.NEWDECIMAL]: 'decimal',
  [T.TINY]: 'tinyint',
  [T.SHORT]: 'smallint',
  [T.LONG]: 'int',
  [T.INT24]: 'mediumint',
  [T.LONGLONG]: 'bigint',
  [T.FLOAT]: 'float',
  [T.DOUBLE]: 'double',
  [T.NULL]: 'null',
  [T.TIMESTAMP]: 'timestamp',
  [T.DATE]: 'date',
  [T.NEWDATE]: 'date',
  [T.TIME]: 'time',
  [T.DATETIME]: 'datetime',
  [T.YEAR]: 'year',
  [T.VARCHAR]: 'varchar',
  [T.VAR_STRING]: 'varchar',
  [T.STRING]: 'char',
  [T.BIT]: 'bit',
  [T.JSON]: 'json',
  [T.ENUM]: 'enum',
  [T.SET]: 'set',
  [T.TINY_BLOB]: 'tinyblob',
  [T.MEDIUM_BLOB]: 'mediumblob',
  [T.LONG_BLOB]: 'longblob',
  [T.BLOB]: 'blob',
  [T.GEOMETRY]: 'geometry',
};

export interface MysqlField {
  name: string;
  columnType: number;
  columnLength: number;
  flags: number;
  characterSet: number;
  /** Fraction digits of a DECIMAL result. */
  decimals?: number;
}

export interface MysqlColumnType {
  dbType: string;
  primitive: PrimitiveType;
  convert: (v: unknown) => unknown;
}

const isBinary = (f: MysqlField) => f.characterSet === BINARY_CHARSET;

/** Type of a result column from the protocol's column definition. */
export function mysqlResultType(f: MysqlField): MysqlColumnType {
  const unsigned = (f.flags & UNSIGNED_FLAG) !== 0;
  let dbType = NAMES[f.columnType] ?? `type ${f.columnType}`;
  if (
    unsigned &&
    ['tinyint', 'smallint', 'int', 'mediumint', 'bigint', 'decimal', 'float', 'double'].includes(dbType)
  ) {
    dbType += ' unsigned';
  }
  const textual = [T.VARCHAR, T.VAR_STRING, T.STRING, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB] as number[];
  if (textual.includes(f.columnType)) {
    if (isBinary(f)) {
      dbType =
        f.columnType === T.STRING
          ? 'binary'
          : f.columnType === T.VAR_STRING || f.columnType === T.VARCHAR
            ? 'varbinary'
            : dbType;
    } else if (f.columnType >= T.TINY_BLOB && f.columnType <= T.BLOB) {
      dbType = dbType.replace('blob', 'text');
    }
  }
  switch (f.columnType) {
    case T.TINY:
      // tinyint(1) is what MySQL's BOOLEAN is.
      if (f.columnLength === 1)
        return { dbType: 'tinyint(1)', primitive: 'boolean', convert: nullable(normaliseBoolean) };
      return { dbType, primitive: 'integer', convert: nullable(normaliseInteger as (v: unknown) => unknown) };
    case T.SHORT:
    case T.LONG:
    case T.INT24:
    case T.LONGLONG:
    case T.YEAR:
      return { dbType, primitive: 'integer', convert: nullable(normaliseInteger as (v: unknown) => unknown) };
    case T.DECIMAL:
    case T.NEWDECIMAL:
    case T.FLOAT:
    case T.DOUBLE:
      return { dbType, primitive: 'float', convert: nullable(normaliseFloat as (v: unknown) => unknown) };
    case T.DATE:
    case T.NEWDATE:
      return { dbType, primitive: 'date', convert: nullable((v) => normaliseDate(String(v))) };
    case T.DATETIME:
    case T.TIMESTAMP:
      // Sessions run with time_zone '+00:00', so TIMESTAMP text is already UTC; DATETIME is naive.
      return { dbType, primitive: 'datetime', convert: nullable((v) => normaliseTimestamp(String(v))) };
    case T.BIT:
      return f.columnLength === 1
        ? { dbType: 'bit(1)', primitive: 'boolean', convert: nullable((v) => bitsToBigInt(v) !== 0n) }
        : { dbType, primitive: 'integer', convert: nullable((v) => normaliseInteger(bitsToBigInt(v))) };
    case T.GEOMETRY:
    case T.NULL:
      return { dbType, primitive: 'unknown', convert: nullable(normaliseOther) };
    default:
      return {
        dbType,
        primitive: isBinary(f) && f.columnType !== T.JSON ? 'unknown' : 'string',
        convert: nullable(toText),
      };
  }
}

/** Type of a catalog column from information_schema.columns (data_type, column_type). */
export function mysqlCatalogPrimitive(dataType: string, columnType: string): PrimitiveType {
  const dt = dataType.toLowerCase();
  const ct = columnType.toLowerCase();
  if (dt === 'tinyint' && ct.startsWith('tinyint(1)')) return 'boolean';
  if (dt === 'bit') return ct === 'bit(1)' ? 'boolean' : 'integer';
  if (['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'year'].includes(dt)) return 'integer';
  if (['decimal', 'numeric', 'float', 'double', 'real', 'double precision'].includes(dt)) return 'float';
  if (dt === 'date') return 'date';
  if (dt === 'datetime' || dt === 'timestamp') return 'datetime';
  if (
    [
      'char',
      'varchar',
      'tinytext',
      'text',
      'mediumtext',
      'longtext',
      'enum',
      'set',
      'json',
      'time',
      'uuid',
      'inet4',
      'inet6',
    ].includes(dt)
  ) {
    return 'string';
  }
  return 'unknown';
}

function nullable(f: (v: unknown) => unknown): (v: unknown) => unknown {
  return (v) => (v === null || v === undefined ? null : f(v));
}

function toText(v: unknown): unknown {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return normaliseBinary(v);
  return normaliseOther(v);
}

function bitsToBigInt(v: unknown): bigint {
  if (v instanceof Uint8Array) {
    let n = 0n;
    for (const b of v) n = (n << 8n) | BigInt(b);
    return n;
  }
  return BigInt(v as number);
}
