import { describe, expect, it } from 'vitest';
import type { Dialect } from '../../../adapters/sources';
import { readOnlyQueryProblem } from '../../../server/data-sources/sql-validation';

/*
 * readOnlyQueryProblem, the token-level read-only check of generated SQL (POST /api/ai/sql) and of MCP run_sql:
 * writes, side effects and foreign tables hidden anywhere in a query, in each dialect; good queries pass.
 */

const TABLES = [
  { schema: 'public', name: 'sales' },
  { schema: 'public', name: 'regions' },
];
const check = (sql: string, dialect: Dialect = 'postgresql') => readOnlyQueryProblem(dialect, sql, TABLES);
const word = (w: string) => `Разрешены только запросы на чтение: слово ${w} не допускается`;
const fn = (f: string) => `Функция ${f} не разрешена в запросе на чтение`;
const table = (name: string) => `Таблица ${name} не найдена среди таблиц источника`;

describe('readOnlyQueryProblem', () => {
  it('passes read-only queries of the source tables', () => {
    const good: [string, Dialect?][] = [
      ['SELECT product, SUM(amount) FROM public.sales GROUP BY product ORDER BY 2 DESC, 1'],
      ['WITH t AS (SELECT qty FROM sales), u AS (SELECT * FROM t) SELECT SUM(qty) FROM u'],
      ['WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT * FROM n'],
      ['SELECT EXTRACT(YEAR FROM d), SUBSTRING(p FROM 2 FOR 3), a IS DISTINCT FROM b FROM sales WHERE a IN (1, 2)'],
      ['SELECT \'DELETE FROM x; DROP TABLE y\', "update", /* INSERT */ 1 FROM sales -- into\n'],
      ['SELECT * FROM sales s JOIN regions r USING (region_id), "public"."regions" r2'],
      ['SELECT * FROM sales s LEFT JOIN LATERAL (SELECT * FROM regions WHERE id = s.region_id) r ON true'],
      ['SELECT * FROM generate_series(1, 3) g, unnest(ARRAY[1]) u, sales'],
      ['(SELECT 1) UNION (SELECT id FROM sales)'],
      ["SELECT replace(product, 'a', 'b'), count(*) FILTER (WHERE qty > 1) FROM sales GROUP BY 1"],
      ['FROM sales SELECT product', 'duckdb'],
      ['SELECT * FROM sales ARRAY JOIN tags FINAL SETTINGS max_threads = 1', 'clickhouse'],
      ['SELECT `product` FROM `sales` # a comment, regions2\n', 'mysql'],
    ];
    for (const [sql, dialect] of good) expect(check(sql, dialect), sql).toBeNull();
  });

  it('refuses writing words anywhere outside strings and comments', () => {
    const bad: [string, string, Dialect?][] = [
      ['WITH d AS (DELETE FROM sales RETURNING *) SELECT * FROM d', word('DELETE')],
      ['WITH d AS (UPDATE sales SET qty = 0 RETURNING *) SELECT 1', word('UPDATE')],
      ['WITH d AS (INSERT INTO sales VALUES (1) RETURNING *) SELECT 1', word('INSERT')],
      ['SELECT * INTO copy_of_sales FROM sales', word('INTO')],
      ['SELECT * FROM sales FOR UPDATE', word('UPDATE')],
      ['SELECT * FROM sales FOR SHARE', word('FOR SHARE')],
      ["SELECT * FROM sales INTO OUTFILE '/tmp/x'", word('INTO'), 'mysql'],
      ['SELECT * FROM sales LOCK IN SHARE MODE', word('LOCK'), 'mysql'],
      ['SELECT 1 FROM sales WHERE x = 1 /* */ ; DROP TABLE sales', word('DROP')],
    ];
    for (const [sql, message, dialect] of bad) expect(check(sql, dialect), sql).toBe(message);
  });

  it('refuses functions that read files or servers, sleep, lock, change state or run SQL text', () => {
    const bad: [string, string, Dialect?][] = [
      ["SELECT pg_read_file('/etc/passwd')", fn('pg_read_file')],
      ["SELECT pg_catalog . pg_ls_dir ('.')", fn('pg_catalog.pg_ls_dir')],
      ['SELECT "pg_read_binary_file"(\'x\')', fn('pg_read_binary_file')],
      ["SELECT lo_import('/etc/passwd')", fn('lo_import')],
      ["SELECT * FROM dblink('host=x', 'SELECT 1') AS t(a int)", fn('dblink')],
      ["SELECT query_to_xml('DELETE FROM sales', true, true, '')", fn('query_to_xml')],
      ["SELECT set_config('role', 'x', false)", fn('set_config')],
      ["SELECT nextval('s')", fn('nextval')],
      ['SELECT SLEEP(10)', fn('sleep'), 'mysql'],
      ["SELECT LOAD_FILE('/etc/passwd')", fn('load_file'), 'mysql'],
      ["SELECT * FROM read_csv('/etc/passwd')", fn('read_csv'), 'duckdb'],
      ["SELECT getenv('HOME')", fn('getenv'), 'duckdb'],
      ["SELECT * FROM url('http://x', CSV)", fn('url'), 'clickhouse'],
      ["SELECT * FROM s3('http://x')", fn('s3'), 'clickhouse'],
      ["SELECT file('/etc/passwd')", fn('file'), 'clickhouse'],
    ];
    for (const [sql, message, dialect] of bad) expect(check(sql, dialect), sql).toBe(message);
  });

  it('checks every referenced table against the source tables', () => {
    const bad: [string, string, Dialect?][] = [
      ['SELECT * FROM public.sales, other.secret', table('other.secret')],
      ['SELECT * FROM sales s JOIN regions r ON r.id = s.region_id, other.secret', table('other.secret')],
      ['SELECT * FROM sales AS s(a, b), other.secret', table('other.secret')],
      ['SELECT * FROM (public.sales JOIN other.secret ON true)', table('other.secret')],
      ['SELECT * FROM sales WHERE id IN ((SELECT 1) UNION SELECT id FROM other.secret)', table('other.secret')],
      ['SELECT * FROM sales WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_authid)', table('pg_catalog.pg_authid')],
      ['SELECT * FROM sales # , other.secret', table('other.secret')],
      ['TABLE other.secret', table('other.secret')],
      ['SELECT * FROM otherdb.public.sales', table('otherdb.public.sales')],
      ['SELECT * FROM sales WHERE id IN other.secret', table('other.secret'), 'clickhouse'],
      ['SELECT * FROM sales JOIN other.secret ON format = 1, regions2', table('other.secret'), 'clickhouse'],
      // A CTE name excuses only itself, not a schema-qualified table of the same name.
      ['WITH secret AS (SELECT 1) SELECT * FROM other.secret', table('other.secret')],
      // A CTE of a subquery is not visible outside it.
      ['SELECT * FROM (WITH secret AS (SELECT 1) SELECT * FROM secret) a, secret', table('secret')],
      [
        "SELECT * FROM json_populate_recordset(null::sales, '[]')",
        'Табличная функция json_populate_recordset не разрешена: читать можно только таблицы источника',
      ],
      [
        "SELECT * FROM 'data.csv'",
        'Чтение файлов в запросе не разрешено: читать можно только таблицы источника',
        'duckdb',
      ],
    ];
    for (const [sql, message, dialect] of bad) expect(check(sql, dialect), sql).toBe(message);
    // Without a table list (a source owner's own query) names pass; table functions and files still do not.
    expect(readOnlyQueryProblem('postgresql', 'SELECT * FROM other.secret', null)).toBeNull();
    expect(readOnlyQueryProblem('duckdb', "SELECT * FROM read_csv('x')", null)).toBe(fn('read_csv'));
  });

  it('refuses text a tokeniser could read otherwise than the server', () => {
    const ambiguous = (what: string) => `${what} в запросе не поддерживается: перепишите запрос без этого`;
    expect(check("SELECT E'a\\' , pg_read_file('x') , ' FROM sales")).toBe(
      ambiguous('Обратная косая черта в строке или имени'),
    );
    expect(check('SELECT $q$ x $q$ FROM sales')).toBe(ambiguous('Строка в долларовых кавычках'));
    expect(check('SELECT /*! 1, LOAD_FILE(1) */ 1', 'mysql')).toBe(ambiguous('Исполняемый комментарий'));
    expect(check("SELECT 'open")).toBe('Незакрытая строка, имя или комментарий в запросе');
    expect(check('DELETE FROM sales')).toBe('Разрешены только запросы на чтение (SELECT)');
  });
});
