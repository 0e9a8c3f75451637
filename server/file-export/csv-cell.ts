import type { PrimitiveType } from '../query/expr';

/*
 * A CSV cell as the file holds it (POST /api/exports and mailings' csv attachments share this through writeCsv).
 * A spreadsheet opening the file reads a text cell that starts with = + - or @ as a formula, and some strip a leading
 * tab or carriage return before looking ("CSV injection", OWASP): such text is written with a leading apostrophe,
 * which spreadsheets take as "this is text". Numbers are never touched: a value of a number column that reads as a
 * number (the drivers hand numeric and bigint results over as text, "-5.00") stays -5.00. Text that only looks like a
 * number ("-5" in a text column) is text and gets the apostrophe: the column's type decides, never the value alone.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Text a spreadsheet would read as a formula, made inert with a leading apostrophe; other text as it is. */
export function inertText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

export function csvCell(v: unknown, type: PrimitiveType): unknown {
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'bigint') return v.toString();
  const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
  if ((type === 'integer' || type === 'float') && NUMBER_TEXT.test(text)) return text;
  return inertText(text);
}
