import {
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { PrimitiveType } from '../types';
import {
  dateFromEpochDays,
  normaliseBinary,
  normaliseInteger,
  normaliseOther,
  timestampFromEpochMicros,
} from '../values';

const INTEGER_IDS = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
]);
const TIMESTAMP_IDS = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_TZ,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
]);
const STRING_IDS = new Set<DuckDBTypeId>([
  DuckDBTypeId.VARCHAR,
  DuckDBTypeId.ENUM,
  DuckDBTypeId.UUID,
  DuckDBTypeId.TIME,
  DuckDBTypeId.TIME_TZ,
  DuckDBTypeId.INTERVAL,
]);

export function duckdbPrimitive(type: DuckDBType): PrimitiveType {
  const id = type.typeId;
  if (id === DuckDBTypeId.BOOLEAN) return 'boolean';
  if (INTEGER_IDS.has(id)) return 'integer';
  if (id === DuckDBTypeId.FLOAT || id === DuckDBTypeId.DOUBLE || id === DuckDBTypeId.DECIMAL) return 'float';
  if (id === DuckDBTypeId.DATE) return 'date';
  if (TIMESTAMP_IDS.has(id)) return 'datetime';
  if (STRING_IDS.has(id)) return 'string';
  return 'unknown';
}

/** Catalog type names (information_schema.columns.data_type) -> primitive type. */
export function duckdbCatalogPrimitive(dataType: string): PrimitiveType {
  const t = dataType.toUpperCase();
  if (t === 'BOOLEAN') return 'boolean';
  if (/^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$/.test(t)) return 'integer';
  if (t === 'FLOAT' || t === 'DOUBLE' || t === 'REAL' || t.startsWith('DECIMAL')) return 'float';
  if (t === 'DATE') return 'date';
  if (t.startsWith('TIMESTAMP')) return 'datetime';
  if (t === 'VARCHAR' || t === 'UUID' || t.startsWith('ENUM') || t.startsWith('TIME') || t === 'INTERVAL')
    return 'string';
  return 'unknown';
}

type Value = DuckDBValue;

/** DuckDB's own value objects -> the common value form (see values.ts). */
export function duckdbValueConverter(type: DuckDBType): (v: Value) => unknown {
  const id = type.typeId;
  if (id === DuckDBTypeId.BOOLEAN) return (v) => v;
  if (INTEGER_IDS.has(id)) return (v) => (v === null ? null : normaliseInteger(v as number | bigint));
  if (id === DuckDBTypeId.FLOAT || id === DuckDBTypeId.DOUBLE) return (v) => v;
  // The number nearest the decimal, as the other connectors give a DECIMAL (Number of its text): DuckDB's own
  // toDouble divides a rounded double by a power of ten and may land one step off.
  if (id === DuckDBTypeId.DECIMAL) return (v) => (v === null ? null : Number((v as DuckDBDecimalValue).toString()));
  if (id === DuckDBTypeId.DATE) {
    return (v) => {
      if (v === null) return null;
      const days = (v as DuckDBDateValue).days;
      return Math.abs(days) < 100_000_000 ? dateFromEpochDays(days) : String(v);
    };
  }
  const micros = timestampMicros(id);
  if (micros) return (v) => (v === null ? null : timestampFromEpochMicrosSafe(micros(v), v));
  if (id === DuckDBTypeId.BLOB) return (v) => (v === null ? null : normaliseBinary((v as DuckDBBlobValue).bytes));
  if (id === DuckDBTypeId.VARCHAR) return (v) => v;
  return (v) => (v === null ? null : typeof v === 'object' ? String(v) : normaliseOther(v));
}

function timestampMicros(id: DuckDBTypeId): ((v: Value) => bigint) | undefined {
  switch (id) {
    case DuckDBTypeId.TIMESTAMP:
      return (v) => (v as DuckDBTimestampValue).micros;
    case DuckDBTypeId.TIMESTAMP_TZ:
      return (v) => (v as DuckDBTimestampTZValue).micros;
    case DuckDBTypeId.TIMESTAMP_S:
      return (v) => (v as DuckDBTimestampSecondsValue).seconds * 1_000_000n;
    case DuckDBTypeId.TIMESTAMP_MS:
      return (v) => (v as DuckDBTimestampMillisecondsValue).millis * 1000n;
    case DuckDBTypeId.TIMESTAMP_NS:
      return (v) => (v as DuckDBTimestampNanosecondsValue).nanos / 1000n;
    default:
      return undefined;
  }
}

// ±infinity timestamps are stored as the extreme int64 values; they have no calendar form.
const MAX_CALENDAR_MICROS = 8_640_000_000_000_000_000n;

function timestampFromEpochMicrosSafe(micros: bigint, v: Value): string {
  return micros > MAX_CALENDAR_MICROS || micros < -MAX_CALENDAR_MICROS ? String(v) : timestampFromEpochMicros(micros);
}

/** Query parameters as DuckDB values: its binder infers the type of plain JS numbers, strings and booleans. */
export function duckdbParam(v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (v instanceof Date) return v.toISOString();
  return JSON.stringify(v);
}
