import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileExpression, compileFilter, parseExpression } from '../../../../server/query/expr';
import { AGGREGATE_CASES, FILTER_CASES, ROW_CASES, sameValue } from './live-fixtures';
import { clickhouse, duckdb, mariadb, postgres, reachable, type LiveServer } from './live-servers';
import { context } from './helpers';

/**
 * Proves that the compiled SQL is valid and means the same on the real servers: every expression is run and its
 * value compared with the expected one. The test setup (test/setup/source-servers.ts) starts every server, so one
 * that does not answer is a failure, never a skip.
 */
const servers: [string, () => Promise<boolean>, () => Promise<LiveServer>][] = [
  ['PostgreSQL', () => reachable('127.0.0.1', 5432), postgres],
  [
    'MariaDB',
    () => reachable(process.env.MARIADB_HOST ?? '127.0.0.1', Number(process.env.MARIADB_PORT ?? 3306)),
    mariadb,
  ],
  ['DuckDB', async () => true, duckdb],
  [
    'ClickHouse 18.16',
    () => reachable(process.env.CLICKHOUSE_HOST ?? '127.0.0.1', Number(process.env.CLICKHOUSE_HTTP_PORT ?? 8123)),
    clickhouse,
  ],
];

for (const [name, available, open] of servers) {
  describe(`compiled SQL on ${name}`, () => {
    let server: LiveServer;
    beforeAll(async () => {
      if (!(await available())) throw new Error(`${name} does not answer: the test setup should have started it`);
      server = await open();
    });
    afterAll(async () => {
      await server?.close();
    });

    /** Runs every case and reports all mismatches at once, so one run shows the whole picture. */
    async function check(cases: [string, number | string | boolean | null][], where: string) {
      const failures: string[] = [];
      for (const [text, expected] of cases) {
        const { ctx, params } = context(server.dialect);
        const sql = `SELECT ${compileExpression(parseExpression(text), ctx)} AS v FROM ${server.from}${where}`;
        try {
          const actual = await server.value(sql, params.values);
          if (!sameValue(actual, expected))
            failures.push(`${text}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}\n  ${sql}`);
        } catch (e) {
          failures.push(`${text}: ${(e as Error).message}\n  ${sql}`);
        }
      }
      expect(failures).toEqual([]);
    }

    it('computes row expressions as expected', () => check(ROW_CASES, ' WHERE t.id = 1'));

    it('computes aggregates as expected', () => check(AGGREGATE_CASES, ''));

    it('applies widget filters as expected', async () => {
      const failures: string[] = [];
      for (const [filter, expected] of FILTER_CASES) {
        const { ctx, params } = context(server.dialect);
        const sql = `SELECT COUNT(*) AS v FROM ${server.from} WHERE ${compileFilter(filter, ctx)}`;
        try {
          const actual = await server.value(sql, params.values);
          if (Number(actual) !== expected)
            failures.push(`${JSON.stringify(filter)}: expected ${expected}, got ${actual}\n  ${sql}`);
        } catch (e) {
          failures.push(`${JSON.stringify(filter)}: ${(e as Error).message}\n  ${sql}`);
        }
      }
      expect(failures).toEqual([]);
    });

    it.runIf(name === 'PostgreSQL')(
      'compares a string literal with a uuid column (the placeholder takes the column type)',
      async () => {
        const { ctx, params } = context('postgresql');
        const text =
          "[t.u] = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AND COALESCE([t.u], 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12') IS NOT NULL";
        const condition = compileExpression(parseExpression(text), ctx);
        expect(await server.value(`SELECT COUNT(*) AS v FROM t WHERE ${condition}`, params.values)).toBe('1');
      },
    );
  });
}
