/**
 * Splits SQL text on top-level semicolons, honouring quotes, comments and PostgreSQL dollar quoting.
 * Used where a driver takes one statement per call (initial_sql on MySQL and ClickHouse).
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      i = lineEnd(sql, i);
    } else if (c === '#') {
      i = lineEnd(sql, i); // MySQL comment
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i = quotedEnd(sql, i, c);
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? n : end + tag[0].length;
      } else {
        i++;
      }
    } else if (c === ';') {
      push(out, sql.slice(start, i));
      start = ++i;
    } else {
      i++;
    }
  }
  push(out, sql.slice(start));
  return out;
}

/** The statement's first keyword, lower-cased, after comments and opening parentheses. */
export function leadingKeyword(sql: string): string {
  const stripped = sql.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/|\()+/, '');
  const m = /^[A-Za-z]+/.exec(stripped);
  return m ? m[0].toLowerCase() : '';
}

function push(out: string[], stmt: string): void {
  const s = stmt.trim();
  if (s && !/^(\s|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*$/.test(s)) out.push(s);
}

function lineEnd(sql: string, i: number): number {
  const end = sql.indexOf('\n', i);
  return end < 0 ? sql.length : end + 1;
}

function quotedEnd(sql: string, i: number, q: string): number {
  let j = i + 1;
  while (j < sql.length) {
    if (sql[j] === '\\' && q !== '"') {
      j += 2;
    } else if (sql[j] === q) {
      if (sql[j + 1] === q) j += 2;
      else return j + 1;
    } else {
      j++;
    }
  }
  return sql.length;
}
