import type { Dialect } from '../../adapters/sources';
import { Refused, tokenize, type Token } from './sql-tokenizer';

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

const READ_ONLY_MSG = {
  notQuery: 'Разрешены только запросы на чтение (SELECT)',
  word: (w: string) => `Разрешены только запросы на чтение: слово ${w.toUpperCase()} не допускается`,
  fn: (f: string) => `Функция ${f} не разрешена в запросе на чтение`,
  tableFn: (f: string) => `Табличная функция ${f} не разрешена: читать можно только таблицы источника`,
  table: (name: string) => `Таблица ${name} не найдена среди таблиц источника`,
  fileScan: 'Чтение файлов в запросе не разрешено: читать можно только таблицы источника',
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
