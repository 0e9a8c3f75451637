import pg from 'pg';

/*
 * A widget read on a live PostgreSQL source is one statement the query compiler made, bounded, inside BEGIN READ ONLY
 * and ROLLBACK. Sent as three statements (the SELECT over the extended protocol, which takes exactly one), the server
 * answers three times and the driver handles three queries: in bench:load's bare_ro mode that doubled a bare route's
 * CPU per request (99 -> 168 us) and cost 40 % of its req/s. Sent as one simple-protocol text, it costs about what
 * the bare SELECT alone does. The simple protocol runs every statement a text holds, so only the compiler's own
 * text goes this way (QueryOptions.compiledText: no SQL a user wrote), and only once this scan has found it shaped as
 * the compiler shapes it: outside double-quoted identifiers nothing but keywords, operators, numbers and $n
 * placeholders, with no quote, semicolon, backslash, comment or dollar quoting that could end a statement or hide one.
 * Each $n becomes its value as a quoted literal (pg's escapeLiteral, correct whatever standard_conforming_strings
 * says), which the server types from its context as it types an untyped parameter: the driver sends parameters as
 * text of unknown type too.
 */

/** Values written in: what the compiler binds (filter values, dates and times as text). Anything else: not inlined. */
function literal(value: unknown): string | null {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      // A NUL ends a simple-protocol text early; the extended protocol refuses it with the server's own words.
      return value.includes('\u0000') ? null : pg.escapeLiteral(value);
    case 'number':
    case 'bigint':
    case 'boolean':
      return pg.escapeLiteral(String(value));
    default:
      return null;
  }
}

const isIdentifierChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/**
 * The compiled statement with its parameters written in, or null when the text is not shaped as the compiler makes
 * it or a value is not one it binds (the caller then sends the statement with its parameters as usual).
 */
export function inlineCompiledParams(text: string, params: readonly unknown[]): string | null {
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === '"') {
      // A quoted identifier: "" inside is a quote; no end is no statement the compiler made.
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) return null;
        if (text[q + 1] === '"') j = q + 2;
        else {
          i = q + 1;
          break;
        }
      }
      continue;
    }
    if (c === "'" || c === ';' || c === '\\' || c === '`') return null;
    if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*')) return null;
    if (c === '$') {
      let j = i + 1;
      while (j < text.length && text[j] >= '0' && text[j] <= '9') j++;
      // Not a placeholder (dollar quoting, or a $ inside an unquoted name): not the compiler's shape.
      if (j === i + 1 || isIdentifierChar(text[i - 1]) || isIdentifierChar(text[j])) return null;
      const n = Number(text.slice(i + 1, j));
      if (!Number.isSafeInteger(n) || n < 1 || n > params.length) return null;
      const value = literal(params[n - 1]);
      if (value === null) return null;
      out += text.slice(copied, i) + value;
      copied = j;
      i = j;
      continue;
    }
    i++;
  }
  return out + text.slice(copied);
}
