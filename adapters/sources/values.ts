import type { PrimitiveType } from './types';
// One value normalisation for every kind: the query engine compares results across dialects, so the same
// stored value must come out identically from PostgreSQL, MySQL, ClickHouse and DuckDB.
//   integer  -> number when |v| <= MAX_SAFE_INTEGER, else its decimal string
//   decimal  -> number
//   boolean  -> boolean
//   date     -> 'YYYY-MM-DD'
//   datetime -> 'YYYY-MM-DDTHH:MM:SS[.fraction]' with no zone suffix: naive timestamps as stored; instants
//               (timestamptz, MySQL TIMESTAMP, ClickHouse DateTime) converted to UTC. Fraction digits only when
//               non-zero, trailing zeros trimmed. No suffix, because ClickHouse has no naive type: a suffix would
//               make the same data differ between dialects.
//   null     -> null; everything else -> string

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

export function normaliseInteger(v: string | number | bigint): number | string {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return v <= MAX_SAFE && v >= MIN_SAFE ? Number(v) : v.toString();
  // Short decimal strings are always safe; longer ones go through BigInt to decide exactly.
  if (v.length < 16) {
    const n = Number(v);
    return Number.isNaN(n) ? v : n;
  }
  try {
    return normaliseInteger(BigInt(v));
  } catch {
    return v;
  }
}

const FLOAT_WORDS: Record<string, number> = {
  inf: Infinity,
  '+inf': Infinity,
  '-inf': -Infinity,
  infinity: Infinity,
  '+infinity': Infinity,
  '-infinity': -Infinity,
  nan: NaN,
  '-nan': NaN,
  '+nan': NaN,
};

export function normaliseFloat(v: string | number | bigint): number | string {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  const n = Number(v);
  if (!Number.isNaN(n) && v.trim() !== '') return n;
  const word = FLOAT_WORDS[v.toLowerCase()];
  return word === undefined ? v : word;
}

export function normaliseBoolean(v: unknown): boolean | unknown {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return v !== 0 && v !== 0n;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 't' || s === 'true' || s === '1') return true;
    if (s === 'f' || s === 'false' || s === '0') return false;
  }
  return v;
}

const DATE_PREFIX = /^(\d{4,})-(\d{2})-(\d{2})/;

/** Dates arrive as text in every driver we configure; anything unusual (infinity, BC) stays as text. */
export function normaliseDate(v: string): string {
  const m = DATE_PREFIX.exec(v);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : v;
}

const TIMESTAMP_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?))?$/;

/**
 * Timestamp text as drivers print it ('2024-01-02 10:00:00.123456', optionally with '+03' style offset).
 * With an offset the value is converted to UTC. `zone` names the IANA zone a naive wall-clock text is in
 * (ClickHouse prints DateTime in the server's or the column's zone); without it the text is kept as is.
 */
export function normaliseTimestamp(v: string, zone?: string): string {
  const m = TIMESTAMP_TEXT.exec(v.trim());
  if (!m) return v;
  const [, y, mo, d, h, mi, s = '00', frac = '', offset] = m;
  const fraction = frac.replace(/0+$/, '');
  if (!offset && (!zone || isUtcZone(zone))) return formatParts(y, mo, d, h, mi, s, fraction);
  const wallMs = utcMillis(+y, +mo, +d, +h, +mi, +s);
  const utcMs = offset ? wallMs - offsetMillis(offset) : zonedWallClockToUtc(wallMs, zone!);
  return formatUtcMillis(utcMs, fraction);
}

/** Epoch microseconds (DuckDB TIMESTAMP / TIMESTAMPTZ) -> canonical text. */
export function timestampFromEpochMicros(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const subMs = Number(micros - ms * 1000n); // 0..999 micros below the millisecond
  const msPart = Number(ms);
  const d = new Date(msPart);
  if (Number.isNaN(d.getTime())) return micros.toString();
  const millis = d.getUTCMilliseconds();
  const fraction = (String(millis).padStart(3, '0') + String(subMs).padStart(3, '0')).replace(/0+$/, '');
  return formatUtcMillis(msPart - millis, fraction);
}

export function dateFromEpochDays(days: number): string {
  const d = new Date(days * 86_400_000);
  if (Number.isNaN(d.getTime())) return String(days);
  return `${yearText(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** Binary values: text when they are valid UTF-8 (MySQL marks many computed strings binary), else \x hex. */
export function normaliseBinary(b: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return '\\x' + Buffer.from(b).toString('hex');
  }
}

/** Last resort for values a driver hands over as objects. */
export function normaliseOther(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return normaliseInteger(v);
  if (v instanceof Uint8Array) return normaliseBinary(v);
  if (v instanceof Date)
    return formatUtcMillis(
      v.getTime() - v.getUTCMilliseconds(),
      String(v.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, ''),
    );
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  } catch {
    return String(v);
  }
}

function formatParts(y: string, mo: string, d: string, h: string, mi: string, s: string, fraction: string): string {
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction ? '.' + fraction : ''}`;
}

function formatUtcMillis(ms: number, fraction: string): string {
  const d = new Date(ms);
  return formatParts(
    yearText(d.getUTCFullYear()),
    pad2(d.getUTCMonth() + 1),
    pad2(d.getUTCDate()),
    pad2(d.getUTCHours()),
    pad2(d.getUTCMinutes()),
    pad2(d.getUTCSeconds()),
    fraction,
  );
}

function utcMillis(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  // Date.UTC maps years 0..99 to 19xx; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

function offsetMillis(offset: string): number {
  if (offset === 'Z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(/:/g, '');
  const hh = +digits.slice(0, 2);
  const mm = +(digits.slice(2, 4) || 0);
  const ss = +(digits.slice(4, 6) || 0);
  return sign * ((hh * 60 + mm) * 60 + ss) * 1000;
}

function isUtcZone(zone: string): boolean {
  return /^(Etc\/)?(UTC|UCT|GMT|Zulu|Universal|Greenwich)(0|[+-]0)?$/i.test(zone);
}

const zoneFormatters = new Map<string, Intl.DateTimeFormat>();

function zoneOffsetAt(zone: string, utcMs: number): number {
  let f = zoneFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      era: 'short',
    });
    zoneFormatters.set(zone, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(utcMs))) parts[p.type] = p.value;
  let year = +parts.year;
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const asUtc = utcMillis(year, +parts.month, +parts.day, +parts.hour, +parts.minute, +parts.second);
  return asUtc - (utcMs - (((utcMs % 1000) + 1000) % 1000));
}

function zonedWallClockToUtc(wallMs: number, zone: string): number {
  try {
    // Two passes settle the offset also next to a DST change.
    let utc = wallMs - zoneOffsetAt(zone, wallMs);
    utc = wallMs - zoneOffsetAt(zone, utc);
    return utc;
  } catch {
    return wallMs; // unknown zone name: keep the wall clock
  }
}

function pad2(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

function yearText(y: number): string {
  return y >= 0 && y < 10000 ? String(y).padStart(4, '0') : String(y);
}

/**
 * The converter of one column whose driver hands values over as text (PostgreSQL with type parsers off, ClickHouse
 * TabSeparated): null stays null, everything else goes to the common value form of its primitive type. `zone` is the
 * time zone a naive timestamp text is written in (ClickHouse DateTime); texts with an offset carry their own.
 */
export function textValueConverter(primitive: PrimitiveType, zone?: string): (v: string | null) => unknown {
  const convert: ((v: string) => unknown) | undefined = {
    integer: normaliseInteger,
    float: normaliseFloat,
    boolean: normaliseBoolean,
    date: normaliseDate,
    datetime: (v: string) => normaliseTimestamp(v, zone),
    string: undefined,
    unknown: undefined,
  }[primitive];
  return convert ? (v) => (v === null ? null : convert(v)) : (v) => v;
}
