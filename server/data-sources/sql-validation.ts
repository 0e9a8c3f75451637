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

// The read-only check of a query other areas run (the AI assistant's SQL, the MCP run_sql tool) lives beside the
// plan; this module is the one they import.
export { readOnlyQueryProblem } from './sql-read-only';
