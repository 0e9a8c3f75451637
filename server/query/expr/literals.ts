/**
 * Reading the text of literals and references. Shared by the parser and by filter values, so a date written in a
 * formula and a date sent as a filter value obey the same rules.
 */

/** Body of a quoted string without its quotes; the quote character is escaped by doubling it. */
export function unquoteString(image: string): string {
  const quote = image[0];
  return image
    .slice(1, -1)
    .split(quote + quote)
    .join(quote);
}

/**
 * Splits the inside of `[...]` (with `]]` already meaning `]`): the FIRST dot separates table from field, so a
 * field name may contain dots (ClickHouse nested columns) but a table name may not. No dot: a calculated field.
 */
export function splitReference(inner: string): { table: string; field: string } | { name: string } {
  const dot = inner.indexOf('.');
  if (dot < 0) return { name: inner };
  return { table: inner.slice(0, dot), field: inner.slice(dot + 1) };
}

export function unescapeReference(image: string): string {
  return image.slice(1, -1).replaceAll(']]', ']');
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

function validDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const daysInMonth = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= daysInMonth;
}

/** 'YYYY-MM-DD' if the text is a real calendar date in that form, else null. */
export function normalizeDate(text: string): string | null {
  const m = DATE.exec(text);
  if (!m) return null;
  return validDay(+m[1], +m[2], +m[3]) ? text : null;
}

/** 'YYYY-MM-DD HH:MM:SS' from 'YYYY-MM-DD[ T]HH:MM[:SS]', or null if the text is not a real moment in that form. */
export function normalizeDateTime(text: string): string | null {
  const m = DATETIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00'] = m;
  if (!validDay(+y, +mo, +d) || +h > 23 || +mi > 59 || +s > 59) return null;
  return `${y}-${mo}-${d} ${h}:${mi}:${s}`;
}

/** Reads a `#...#` literal. */
export function parseDateLiteral(image: string): { type: 'date' | 'datetime'; value: string } | null {
  const inner = image.slice(1, -1).trim();
  const date = normalizeDate(inner);
  if (date) return { type: 'date', value: date };
  const datetime = normalizeDateTime(inner);
  return datetime ? { type: 'datetime', value: datetime } : null;
}

/** Reads a number token: integers must be exact in a double, every number finite. Null when it is not. */
export function parseNumberLiteral(image: string): { type: 'integer' | 'float'; value: number } | null {
  const value = Number(image);
  if (/^\d+$/.test(image)) return Number.isSafeInteger(value) ? { type: 'integer', value } : null;
  return Number.isFinite(value) ? { type: 'float', value } : null;
}
