import type { Literal } from './ast';
import { ExpressionError, quoted } from './errors';
import { normalizeDate, normalizeDateTime } from './literals';

export const FILTER_VALUE_TYPES = ['string', 'number', 'integer', 'float', 'date', 'datetime', 'boolean'] as const;
export type FilterValueType = (typeof FILTER_VALUE_TYPES)[number];

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function show(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  try {
    return quoted(JSON.stringify(value) ?? String(value));
  } catch {
    return quoted(String(value));
  }
}

function bad(value: unknown, index: number, what: string): ExpressionError {
  return new ExpressionError(`значение фильтра №${index + 1} ${show(value)} не является ${what}`);
}

function toNumber(value: unknown, index: number): number {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && NUMBER.test(value.trim())
        ? Number(value.trim())
        : NaN;
  if (!Number.isFinite(n)) throw bad(value, index, 'числом');
  return n;
}

/** A datetime value: 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM[:SS]' or ISO with 'T'; fractions of a second and a trailing Z
 * (as Date.toISOString writes) are dropped: the value is compared as wall-clock time of the source. */
function toDateTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim().replace(/(\.\d+)?Z?$/, '');
  const date = normalizeDate(text);
  return date ? `${date} 00:00:00` : normalizeDateTime(text);
}

/**
 * One filter value as a typed literal, or null for a JSON null. The filter's value_type decides how the value is
 * read; anything that does not read as that type is an error naming the value.
 */
export function filterValueLiteral(value: unknown, type: FilterValueType, index: number): Literal | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'string':
      if (typeof value === 'string') return { kind: 'literal', type: 'string', value };
      if (typeof value === 'number' || typeof value === 'boolean')
        return { kind: 'literal', type: 'string', value: String(value) };
      throw bad(value, index, 'строкой');
    case 'number': {
      const n = toNumber(value, index);
      return { kind: 'literal', type: Number.isSafeInteger(n) ? 'integer' : 'float', value: n };
    }
    case 'integer': {
      const n = toNumber(value, index);
      if (!Number.isSafeInteger(n)) throw bad(value, index, 'целым числом');
      return { kind: 'literal', type: 'integer', value: n };
    }
    case 'float':
      return { kind: 'literal', type: 'float', value: toNumber(value, index) };
    case 'date': {
      const text = typeof value === 'string' ? value.trim() : '';
      // A datetime whose date part is wanted (2024-01-31T00:00:00.000Z) is accepted too.
      const date = normalizeDate(text) ?? (toDateTime(text) ? text.slice(0, 10) : null);
      if (!date) throw bad(value, index, 'датой (ГГГГ-ММ-ДД)');
      return { kind: 'literal', type: 'date', value: date };
    }
    case 'datetime': {
      const datetime = toDateTime(value);
      if (!datetime) throw bad(value, index, 'датой и временем (ГГГГ-ММ-ДД ЧЧ:ММ:СС)');
      return { kind: 'literal', type: 'datetime', value: datetime };
    }
    case 'boolean': {
      const text = String(value).trim().toLowerCase();
      if (value === true || text === 'true' || text === '1') return { kind: 'literal', type: 'boolean', value: true };
      if (value === false || text === 'false' || text === '0')
        return { kind: 'literal', type: 'boolean', value: false };
      throw bad(value, index, 'логическим значением (true или false)');
    }
  }
}

/** `%`, `_` and the escape character itself, escaped so a searched text matches literally in LIKE. */
export function escapeLikeText(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
