import type { Dialect } from '../../adapters/sources';

/*
 * The tokeniser of the read-only query check (sql-read-only.ts): strings, quoted names, comments, words, numbers and
 * punctuation told apart as the servers do. Where it and a server could disagree (a backslash in a string, dollar
 * quoting, MySQL's executable comments), it throws Refused with the message to answer rather than guess.
 */

export type Token = { t: 'word' | 'quoted' | 'string' | 'number' | 'punct'; v: string };

const TOKEN_MSG = {
  ambiguous: (what: string) => `${what} в запросе не поддерживается: перепишите запрос без этого`,
  unterminated: 'Незакрытая строка, имя или комментарий в запросе',
};

/** A text the tokeniser will not read; its message is the answer. */
export class Refused extends Error {}

export function tokenize(dialect: Dialect, sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  const quoted = (q: string): string => {
    let j = i + 1;
    let text = '';
    for (;;) {
      if (j >= n) throw new Refused(TOKEN_MSG.unterminated);
      const c = sql[j];
      // Whether a backslash escapes depends on the server and its settings: refuse rather than guess.
      if (c === '\\') throw new Refused(TOKEN_MSG.ambiguous('Обратная косая черта в строке или имени'));
      if (c === q) {
        if (sql[j + 1] === q) {
          text += q;
          j += 2;
          continue;
        }
        i = j + 1;
        return text;
      }
      text += c;
      j++;
    }
  };
  while (i < n) {
    const c = sql[i];
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '#' && dialect === 'mysql') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      // MySQL runs the text of /*! ... */ and optimizer hints /*+ ... */ sit in the same form: refuse both.
      if (sql[i + 2] === '!' || sql[i + 2] === '+') throw new Refused(TOKEN_MSG.ambiguous('Исполняемый комментарий'));
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new Refused(TOKEN_MSG.unterminated);
      // PostgreSQL nests block comments; ending at the first */ sees more text as code, never less.
      i = end + 2;
    } else if (c === "'") {
      out.push({ t: 'string', v: quoted("'") });
    } else if (c === '"') {
      // A string in MySQL, a name elsewhere: checked as a name (a string is never a known table).
      out.push({ t: dialect === 'mysql' ? 'string' : 'quoted', v: quoted('"') });
    } else if (c === '`') {
      out.push({ t: 'quoted', v: quoted('`') });
    } else if (c === '$' && /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i))) {
      throw new Refused(TOKEN_MSG.ambiguous('Строка в долларовых кавычках'));
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      const m = /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/.exec(sql.slice(i))!;
      // E'...', N'...', X'...', B'...', U&'...': the prefix is part of the string.
      if (sql[i + m[0].length] === "'" && /^(e|n|x|b)$/i.test(m[0])) {
        i += m[0].length;
        continue;
      }
      out.push({ t: 'word', v: m[0].toLowerCase() });
      i += m[0].length;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(next ?? ''))) {
      const m = /^[0-9.]+(?:e[+-]?[0-9]+)?[A-Za-z0-9_]*/i.exec(sql.slice(i))!;
      out.push({ t: 'number', v: m[0] });
      i += m[0].length;
    } else {
      out.push({ t: 'punct', v: c });
      i++;
    }
  }
  return out;
}
