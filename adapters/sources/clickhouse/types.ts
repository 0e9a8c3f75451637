import type { PrimitiveType } from '../types';
import { textValueConverter } from '../values';

export interface ClickHouseType {
  primitive: PrimitiveType;
  /** Zone a DateTime is printed in: the column's own, else the server's (undefined until known). */
  zone?: string;
  /** True for DateTime without an explicit zone (printed in the server's zone). */
  usesServerZone: boolean;
}

/** Strips the wrappers that do not change how a value is printed. */
function unwrap(type: string): string {
  let t = type.trim();
  for (;;) {
    const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t);
    if (!m) return t;
    t = m[1].trim();
  }
}

export function clickhouseType(type: string): ClickHouseType {
  const t = unwrap(type);
  if (/^U?Int(8|16|32|64|128|256)$/.test(t)) return { primitive: 'integer', usesServerZone: false };
  if (/^(Float(32|64)|Decimal(32|64|128|256)?\b)/.test(t)) return { primitive: 'float', usesServerZone: false };
  if (t === 'Bool' || t === 'Boolean') return { primitive: 'boolean', usesServerZone: false };
  if (t === 'Date' || t === 'Date32') return { primitive: 'date', usesServerZone: false };
  const dt = /^DateTime(?:64)?(?:\((?:\s*\d+\s*,?)?\s*(?:'([^']+)')?\s*\))?$/.exec(t);
  if (dt) return { primitive: 'datetime', zone: dt[1], usesServerZone: !dt[1] };
  if (/^(String|FixedString\(\d+\)|UUID|Enum(8|16)?\(|IPv4|IPv6)/.test(t))
    return { primitive: 'string', usesServerZone: false };
  return { primitive: 'unknown', usesServerZone: false };
}

/** Converts one unescaped TSV field (null for \N) to the common value form. DateTime is an instant printed as
 * wall-clock time in its column's zone (else the server's): it is converted to UTC (see values.ts). */
export function clickhouseValueConverter(
  info: ClickHouseType,
  serverZone: string | undefined,
): (v: string | null) => unknown {
  return textValueConverter(info.primitive, info.primitive === 'datetime' ? (info.zone ?? serverZone) : undefined);
}

const ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  r: '\r',
  n: '\n',
  t: '\t',
  '0': '\0',
  "'": "'",
  '\\': '\\',
};

/** Splits one TabSeparated line into fields, undoing ClickHouse's escaping; \N is NULL. */
export function parseTsvLine(line: string): (string | null)[] {
  const parts = line.split('\t');
  const out: (string | null)[] = new Array(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (p === '\\N') out[i] = null;
    else out[i] = p.includes('\\') ? p.replace(/\\(.)/g, (_m, c: string) => ESCAPES[c] ?? c) : p;
  }
  return out;
}

/** A string literal in ClickHouse syntax (for our own catalog queries; user queries carry their literals). */
export function clickhouseString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
