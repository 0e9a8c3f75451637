import type { Dialect } from '../../adapters/sources';
import { leadingKeyword, splitStatements } from '../../adapters/sources/split-statements';

/*
 * How the SQL console checks a statement without running it, per dialect:
 * - a query (SELECT / WITH / VALUES / TABLE) is wrapped as `SELECT * FROM (<sql>) AS q LIMIT 0`: the server parses,
 *   resolves names and plans it, and the wrapper's result gives the columns; with LIMIT 0 no row is produced (MySQL
 *   and MariaDB document LIMIT 0 as the way to check a query; PostgreSQL, DuckDB and ClickHouse stop before reading);
 * - a data change (INSERT / UPDATE / DELETE / MERGE / REPLACE) is checked with EXPLAIN, which plans without executing
 *   (PostgreSQL, MySQL, DuckDB; ClickHouse 18.16 has no EXPLAIN);
 * - anything else (DDL, SET, EXPLAIN itself, which with ANALYZE would execute) is not checked: the answer says so.
 * Only one statement is checked at a time, so nothing can ride along after the wrapper.
 */

export type ValidationPlan =
  | { kind: 'wrap'; sql: string; statement: string }
  | { kind: 'explain'; sql: string; statement: string }
  | { kind: 'unchecked'; message: string }
  | { kind: 'invalid'; message: string };

const QUERY_KEYWORDS: Record<Dialect, string[]> = {
  postgresql: ['select', 'with', 'values', 'table'],
  duckdb: ['select', 'with', 'values', 'table', 'from'],
  mysql: ['select', 'with', 'values', 'table'],
  clickhouse: ['select', 'with'],
};

const DML_KEYWORDS: Record<Dialect, string[]> = {
  postgresql: ['insert', 'update', 'delete', 'merge'],
  duckdb: ['insert', 'update', 'delete'],
  mysql: ['insert', 'update', 'delete', 'replace'],
  clickhouse: [],
};

/** First words of statements in any of the dialects: a word outside this list is a typo, reported at once. */
const STATEMENT_KEYWORDS = new Set([
  ...Object.values(QUERY_KEYWORDS).flat(),
  ...Object.values(DML_KEYWORDS).flat(),
  'alter',
  'analyze',
  'attach',
  'begin',
  'call',
  'checkpoint',
  'check',
  'close',
  'cluster',
  'comment',
  'commit',
  'copy',
  'create',
  'deallocate',
  'declare',
  'desc',
  'describe',
  'detach',
  'discard',
  'do',
  'drop',
  'end',
  'execute',
  'exists',
  'explain',
  'export',
  'fetch',
  'flush',
  'grant',
  'handler',
  'import',
  'insert',
  'install',
  'kill',
  'listen',
  'load',
  'lock',
  'move',
  'notify',
  'optimize',
  'pivot',
  'pragma',
  'prepare',
  'reassign',
  'refresh',
  'reindex',
  'release',
  'rename',
  'repair',
  'reset',
  'revoke',
  'rollback',
  'savepoint',
  'security',
  'set',
  'show',
  'start',
  'summarize',
  'system',
  'truncate',
  'uninstall',
  'unlisten',
  'unlock',
  'unpivot',
  'use',
  'vacuum',
  'watch',
  'xa',
]);

export function validationPlan(dialect: Dialect, text: string): ValidationPlan {
  const statements = splitStatements(text);
  if (statements.length === 0) return { kind: 'invalid', message: 'Запрос пуст' };
  if (statements.length > 1) {
    return { kind: 'invalid', message: `Проверяется одна команда за раз, а в тексте их ${statements.length}` };
  }
  const statement = statements[0];
  const keyword = leadingKeyword(statement);
  if (QUERY_KEYWORDS[dialect].includes(keyword)) {
    // The statement on lines of its own: a trailing -- comment cannot swallow the wrapper's end.
    return { kind: 'wrap', sql: `SELECT * FROM (\n${statement}\n) AS q LIMIT 0`, statement };
  }
  if (DML_KEYWORDS[dialect].includes(keyword)) return { kind: 'explain', sql: `EXPLAIN ${statement}`, statement };
  if (!STATEMENT_KEYWORDS.has(keyword)) {
    return {
      kind: 'invalid',
      message: keyword
        ? `Синтаксическая ошибка: неизвестная команда «${keyword.toUpperCase()}»`
        : 'Синтаксическая ошибка в начале запроса',
    };
  }
  const what = keyword.toUpperCase();
  return { kind: 'unchecked', message: `Команды ${what} нельзя проверить без выполнения: их проверит только запуск` };
}

/*
 * A query that must only read (the AI assistant's generated SQL, the MCP run_sql tool): beyond the leading keyword,
 * the whole statement is tokenised (strings, quoted names and comments told apart as the servers do) and checked:
 * - no data-changing or session word anywhere outside strings and comments: a PostgreSQL data-modifying CTE
 *   (WITH d AS (DELETE ... RETURNING *) SELECT ...), SELECT ... INTO, FOR UPDATE, INTO OUTFILE;
 * - no function that reads files or other servers, sleeps, locks, changes settings or sequences or runs SQL text
 *   (pg_read_file, lo_import, dblink, query_to_xml, read_csv, url, file, sleep, ...): a deny list by name and prefix;
 * - every table named after FROM, JOIN, a comma of a FROM list, TABLE or ClickHouse's IN is one of `tables`, once
 *   CTE names are set aside (only unqualified names, and only where the CTE is visible); a table function in FROM
 *   only of a small set that reads no table (unnest, generate_series, ...); a file named as a string never.
 * Where a tokeniser and the server could disagree (a backslash in a string, dollar quoting, MySQL's executable
 * comments), the query is refused rather than guessed at. Nothing is run.
 */

type Token = { t: 'word' | 'quoted' | 'string' | 'number' | 'punct'; v: string };

const READ_ONLY_MSG = {
  notQuery: 'Разрешены только запросы на чтение (SELECT)',
  word: (w: string) => `Разрешены только запросы на чтение: слово ${w.toUpperCase()} не допускается`,
  fn: (f: string) => `Функция ${f} не разрешена в запросе на чтение`,
  tableFn: (f: string) => `Табличная функция ${f} не разрешена: читать можно только таблицы источника`,
  table: (name: string) => `Таблица ${name} не найдена среди таблиц источника`,
  fileScan: 'Чтение файлов в запросе не разрешено: читать можно только таблицы источника',
  ambiguous: (what: string) => `${what} в запросе не поддерживается: перепишите запрос без этого`,
  unterminated: 'Незакрытая строка, имя или комментарий в запросе',
};

/** Words that change data, the schema, the session or locks: never in a read-only query (outside strings). */
const WRITE_WORDS = new Set([
  'insert',
  'update',
  'delete',
  'merge',
  'upsert',
  'drop',
  'alter',
  'create',
  'truncate',
  'grant',
  'revoke',
  'copy',
  'into',
  'call',
  'do',
  'vacuum',
  'lock',
  'set',
  'execute',
  'prepare',
  'attach',
  'detach',
  'install',
  'pragma',
  'outfile',
  'dumpfile',
]);

/** Functions that read files or other servers, sleep, lock, change state or run SQL text. */
const DENIED_FUNCTIONS = new Set([
  // PostgreSQL
  'set_config',
  'current_setting',
  'nextval',
  'setval',
  'currval',
  'lastval',
  'txid_current',
  'ts_stat',
  'ts_rewrite',
  'query_to_xml',
  'query_to_xmlschema',
  'query_to_xml_and_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'table_to_xml',
  'table_to_xmlschema',
  'table_to_xml_and_xmlschema',
  'schema_to_xml',
  'schema_to_xmlschema',
  'schema_to_xml_and_xmlschema',
  'database_to_xml',
  'database_to_xmlschema',
  'database_to_xml_and_xmlschema',
  // MySQL
  'sleep',
  'benchmark',
  'load_file',
  'get_lock',
  'release_lock',
  'release_all_locks',
  'is_free_lock',
  'is_used_lock',
  'master_pos_wait',
  'source_pos_wait',
  'sys_exec',
  'sys_eval',
  // DuckDB
  'getenv',
  'glob',
  'sniff_csv',
  'query',
  'query_table',
  'st_read',
  'parquet_scan',
  // ClickHouse
  'file',
  'url',
  'urlcluster',
  'remote',
  'remotesecure',
  'cluster',
  'clusterallreplicas',
  'mysql',
  'postgresql',
  'jdbc',
  'odbc',
  'executable',
  'executablepool',
  'input',
  'mongodb',
  'redis',
  'sqlite',
  'loop',
  'gcs',
  'getsetting',
  'sleepeachrow',
]);
const DENIED_PREFIXES = [
  'pg_',
  'lo_',
  'dblink',
  'brin_',
  'gin_',
  'read_',
  'sqlite_',
  'postgres_',
  'mysql_',
  'duckdb_',
  'pragma_',
  'iceberg',
  'delta',
  'hudi',
  's3',
  'hdfs',
  'azure',
  'dictget',
  'joinget',
  'filesystem',
];

/** Table functions that read no table. */
const TABLE_FUNCTIONS = new Set([
  'unnest',
  'generate_series',
  'generate_subscripts',
  'json_each',
  'json_each_text',
  'jsonb_each',
  'jsonb_each_text',
  'json_array_elements',
  'json_array_elements_text',
  'jsonb_array_elements',
  'jsonb_array_elements_text',
  'json_to_recordset',
  'jsonb_to_recordset',
  'regexp_split_to_table',
  'string_to_table',
  'range',
  'numbers',
]);

/**
 * Words that end a FROM list at its level (per dialect where they are no reserved words elsewhere). Ending a list
 * too late only refuses a good query; ending it too early would let `, other.table` through, so a word ends it only
 * where it cannot be a column name (see endsFromList).
 */
const FROM_END: Record<Dialect, Set<string>> = (() => {
  const common = ['where', 'group', 'having', 'order', 'limit', 'offset', 'fetch', 'window', 'union', 'intersect'];
  const all = [...common, 'except', 'for', 'select'];
  return {
    postgresql: new Set(all),
    mysql: new Set(all),
    duckdb: new Set([...all, 'qualify']),
    clickhouse: new Set([...all, 'settings', 'format', 'prewhere']),
  };
})();

/** Words after which a following word is an operand, not a clause. */
const CONNECTIVES = new Set([
  'on',
  'and',
  'or',
  'not',
  'when',
  'then',
  'else',
  'case',
  'by',
  'using',
  'between',
  'like',
  'ilike',
  'is',
  'in',
  'as',
]);

const QUERY_START = new Set(['select', 'with', 'values', 'table', 'from']);

class Refused extends Error {}

function tokenize(dialect: Dialect, sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  const quoted = (q: string): string => {
    let j = i + 1;
    let text = '';
    for (;;) {
      if (j >= n) throw new Refused(READ_ONLY_MSG.unterminated);
      const c = sql[j];
      // Whether a backslash escapes depends on the server and its settings: refuse rather than guess.
      if (c === '\\') throw new Refused(READ_ONLY_MSG.ambiguous('Обратная косая черта в строке или имени'));
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
      if (sql[i + 2] === '!' || sql[i + 2] === '+')
        throw new Refused(READ_ONLY_MSG.ambiguous('Исполняемый комментарий'));
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new Refused(READ_ONLY_MSG.unterminated);
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
      throw new Refused(READ_ONLY_MSG.ambiguous('Строка в долларовых кавычках'));
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

interface Level {
  kind: 'query' | 'from' | 'other';
  inFrom: boolean;
  expectItem: boolean;
  /** Between WITH and the level's main query: where CTE names are defined. */
  inWith: boolean;
  ctes: Set<string>;
}

const isName = (tok: Token | undefined) => tok !== undefined && (tok.t === 'word' || tok.t === 'quoted');

/** Whether the word at i ends the FROM list: after an operand, and not followed by an operator. */
function endsFromList(dialect: Dialect, tokens: Token[], i: number): boolean {
  const word = tokens[i].v;
  if (!FROM_END[dialect].has(word)) return false;
  const prev = tokens[i - 1];
  const next = tokens[i + 1];
  if (!prev || (prev.t === 'punct' && prev.v !== ')') || (prev.t === 'word' && CONNECTIVES.has(prev.v))) return false;
  if (next?.t === 'punct' && next.v !== '(' && next.v !== '*') return false;
  if ((word === 'group' || word === 'order') && next?.v !== 'by') return false;
  return true;
}

/**
 * The first reason `statement` (one statement, as validationPlan's "wrap") is not a read-only query of `tables`, or
 * null. `tables` are the source's tables as the metadata cache lists them; null: any table name of the source
 * (a source owner's own query), table functions and file reads still refused.
 */
export function readOnlyQueryProblem(
  dialect: Dialect,
  statement: string,
  tables: readonly { schema: string; name: string }[] | null,
): string | null {
  let tokens: Token[];
  try {
    tokens = tokenize(dialect, statement);
  } catch (e) {
    if (e instanceof Refused) return e.message;
    throw e;
  }
  // Opening parentheses are allowed: (SELECT ...) UNION (SELECT ...).
  const first = tokens.find((tok) => tok.v !== '(');
  if (!first || first.t !== 'word' || !QUERY_START.has(first.v)) return READ_ONLY_MSG.notQuery;
  const known = tables && new Set(tables.flatMap((t) => [t.name.toLowerCase(), `${t.schema}.${t.name}`.toLowerCase()]));
  const newLevel = (kind: Level['kind']): Level => ({
    kind,
    inFrom: kind === 'from',
    expectItem: kind === 'from',
    inWith: false,
    ctes: new Set(),
  });
  const levels: Level[] = [newLevel('query')];
  const visibleCte = (name: string) => levels.some((l) => l.ctes.has(name));

  // A CTE name: `name AS (`, `name AS [NOT] MATERIALIZED (` or `name (cols) AS (`.
  const cteAt = (i: number): boolean => {
    let j = i + 1;
    if (tokens[j]?.v === '(') {
      let depth = 0;
      for (; j < tokens.length; j++) {
        if (tokens[j].v === '(') depth++;
        else if (tokens[j].v === ')' && --depth === 0) break;
      }
      j++;
    }
    if (tokens[j]?.v !== 'as') return false;
    j++;
    if (tokens[j]?.v === 'not') j++;
    if (tokens[j]?.v === 'materialized') j++;
    return tokens[j]?.v === '(';
  };

  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const prev = tokens[i - 1];
    const level = levels[levels.length - 1];
    if (tok.t === 'punct') {
      if (tok.v === '(') {
        const opensQuery = tokens[i + 1]?.t === 'word' && QUERY_START.has(tokens[i + 1].v);
        const kind = opensQuery ? 'query' : level.expectItem ? 'from' : 'other';
        level.expectItem = false;
        levels.push(newLevel(kind));
      } else if (tok.v === ')') {
        if (levels.length > 1) levels.pop();
      } else if (tok.v === ',' && level.inFrom) {
        level.expectItem = true;
      }
      continue;
    }
    if (tok.t === 'string') {
      // DuckDB reads a file named as a string in FROM ('data.csv'); no server reads a table so.
      if (level.expectItem) return READ_ONLY_MSG.fileScan;
      continue;
    }
    if (tok.t === 'number') continue;

    // A dotted name: a.b.c (words or quoted names).
    let end = i;
    while (tokens[end + 1]?.v === '.' && isName(tokens[end + 2])) end += 2;
    const parts = tokens.slice(i, end + 1).filter((_, k) => k % 2 === 0);
    const last = parts[parts.length - 1].v.toLowerCase();
    const name = parts.map((p) => p.v).join('.');
    const called = tokens[end + 1]?.v === '(';

    if (called && (DENIED_FUNCTIONS.has(last) || DENIED_PREFIXES.some((p) => last.startsWith(p)))) {
      return READ_ONLY_MSG.fn(name);
    }
    const word = tok.t === 'word' && end === i ? tok.v : null;
    if (word !== null) {
      if (WRITE_WORDS.has(word)) return READ_ONLY_MSG.word(word);
      if (word === 'share' && (prev?.v === 'for' || prev?.v === 'key')) return READ_ONLY_MSG.word('for share');
      if (word === 'select' || word === 'with' || word === 'values') {
        // A SELECT anywhere in parentheses makes them a query: x IN ((SELECT 1) UNION SELECT ... FROM t).
        if (level.kind === 'other') level.kind = 'query';
        level.inWith = word === 'with';
        if (word === 'with') continue;
      }
      if (word === 'from' && level.kind === 'query' && prev?.v !== 'distinct') {
        level.inWith = false;
        level.inFrom = true;
        level.expectItem = true;
        continue;
      }
      if (word === 'join' && level.inFrom) {
        // ClickHouse's ARRAY JOIN unfolds an array column, not a table.
        level.expectItem = prev?.v !== 'array';
        continue;
      }
      if (word === 'table' && (!prev || ['(', 'union', 'intersect', 'except', 'all', 'distinct'].includes(prev.v))) {
        level.inWith = false;
        level.expectItem = true;
        continue;
      }
      if (word === 'in' && isName(tokens[i + 1]) && tokens[i + 2]?.v !== '(') {
        // ClickHouse: x IN db.table reads that table.
        level.expectItem = true;
        continue;
      }
      if (level.expectItem && (word === 'lateral' || word === 'only' || word === 'global')) continue;
      if (level.inFrom && endsFromList(dialect, tokens, i)) {
        level.inFrom = false;
        level.expectItem = false;
        continue;
      }
      if (level.inWith && word === 'recursive') continue;
    }
    if (end === i && level.inWith && ['with', 'recursive', ','].includes(prev?.v ?? '') && cteAt(i)) {
      level.ctes.add(tok.v.toLowerCase());
      continue;
    }
    if (level.expectItem) {
      level.expectItem = false;
      if (called) {
        if (!TABLE_FUNCTIONS.has(last)) return READ_ONLY_MSG.tableFn(name);
      } else if (known && !(parts.length === 1 && visibleCte(last)) && !known.has(name.toLowerCase())) {
        return READ_ONLY_MSG.table(name);
      }
    }
    i = end;
  }
  return null;
}
