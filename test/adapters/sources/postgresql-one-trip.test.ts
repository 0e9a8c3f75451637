// A bounded read of the compiler's own statement (QueryOptions.compiledText) goes to PostgreSQL as one simple-protocol
// text with its parameters written in (adapters/sources/postgresql/inline-params.ts): the same rows as the extended
// protocol gives, every read-only guarantee kept, a failed read leaving the pooled connection clean, and any text not
// shaped as the compiler makes it sent as before (one statement only).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createConnector, type Connector, type QueryOptions } from '../../../adapters/sources';
import { inlineCompiledParams } from '../../../adapters/sources/postgresql/inline-params';
import { connectorFailure } from './connector-failure';
import { pgSettings, randomName } from './servers';

const ONE_TRIP: QueryOptions = { readOnly: true, limit: 100, compiledText: true };
const EXTENDED: QueryOptions = { readOnly: true, limit: 100 };

describe('inlineCompiledParams', () => {
  it('writes each $n as a quoted literal, outside quoted identifiers only', () => {
    expect(
      inlineCompiledParams('SELECT "a$1" AS "x""$2" FROM "t" WHERE ("a" = $1) AND ("b" >= CAST($2 AS numeric))', [
        "O'Brien",
        0.5,
      ]),
    ).toBe(`SELECT "a$1" AS "x""$2" FROM "t" WHERE ("a" = 'O''Brien') AND ("b" >= CAST('0.5' AS numeric))`);
    expect(inlineCompiledParams('SELECT $1, $2, $3, $10', [null, true, 12n, 1, 1, 1, 1, 1, 1, 'back\\slash'])).toBe(
      `SELECT NULL, 'true', '12',  E'back\\\\slash'`,
    );
  });

  it('refuses any text the compiler does not make, and values it does not bind', () => {
    for (const text of [
      "SELECT 'a'",
      'SELECT 1; COMMIT',
      'SELECT 1 -- comment',
      'SELECT /* c */ 1',
      'SELECT $$x$$',
      'SELECT $tag$x$tag$',
      'SELECT a$1 FROM t',
      'SELECT $1a',
      'SELECT E\\x',
      'SELECT "unclosed',
      'SELECT $2',
      'SELECT $0',
    ])
      expect(inlineCompiledParams(text, [1]), text).toBeNull();
    for (const value of [new Date(0), { a: 1 }, [1], Buffer.from('x'), undefined, 'a\u0000b'])
      expect(inlineCompiledParams('SELECT $1', [value])).toBeNull();
  });
});

describe('one-trip bounded reads on PostgreSQL', () => {
  let c: Connector;
  const table = randomName();
  const seq = randomName('s');

  beforeAll(async () => {
    // One connection: whatever a read leaves behind would meet the next one.
    c = createConnector('postgresql', pgSettings(), { poolSize: 1 });
    await c.query(`CREATE TABLE public.${table} (id int PRIMARY KEY, name text, amount numeric, big bigint)`, []);
    await c.query(
      `INSERT INTO public.${table} VALUES (1, 'O''Brien', 1.5, 9007199254740993), (2, 'back\\slash', 0.0000001, -1),
         (3, '''; COMMIT; DELETE FROM public.${table}; --', 2, 0), (4, 'чай', null, null)`,
      [],
    );
    await c.query(`CREATE SEQUENCE public.${seq}`, []);
  });

  afterAll(async () => {
    await c.query(`DROP TABLE IF EXISTS public.${table}`, []);
    await c.query(`DROP SEQUENCE IF EXISTS public.${seq}`, []);
    await c.close();
  });

  const byName = `SELECT "t0"."id" AS "__c0", "t0"."amount" AS "__c1", "t0"."big" AS "__c2" FROM "public"."${table}" AS "t0" WHERE ("t0"."name" = $1) LIMIT 101`;

  it('answers what the extended protocol answers, in one query of the driver', async () => {
    const query = vi.spyOn(pg.Client.prototype, 'query');
    try {
      for (const name of ["O'Brien", 'back\\slash', `'; COMMIT; DELETE FROM public.${table}; --`, 'чай', 'нет']) {
        query.mockClear();
        const one = await c.query(byName, [name], ONE_TRIP);
        expect(query).toHaveBeenCalledTimes(1);
        expect(one).toEqual(await c.query(byName, [name], EXTENDED));
      }
      const range = `SELECT "t0"."id" AS "__c0" FROM "public"."${table}" AS "t0" WHERE ("t0"."amount" >= CAST($1 AS numeric)) AND ("t0"."big" < CAST($2 AS bigint)) ORDER BY "__c0" ASC LIMIT 101`;
      expect((await c.query(range, [1e-7, '9007199254740994'], ONE_TRIP)).rows).toEqual([[1], [2], [3]]);
      expect((await c.query(range, [1e-7, 0], ONE_TRIP)).rows).toEqual([[2]]);
    } finally {
      query.mockRestore();
    }
    expect((await c.query(`SELECT count(*)::int FROM public.${table}`, [])).rows).toEqual([[4]]);
  });

  it('keeps every read-only guarantee, and what a read-only transaction allows is rolled back', async () => {
    expect(
      await connectorFailure(() => c.query(`SELECT nextval(CAST($1 AS regclass)) AS "n"`, [`public.${seq}`], ONE_TRIP)),
    ).toMatchObject({ kind: 'query', message: expect.stringContaining('nextval()') });
    const path = (await c.query('SHOW search_path', [])).rows;
    await c.query('SELECT set_config($1, $2, false) AS "x"', ['search_path', 'pg_catalog'], ONE_TRIP);
    await c.query('SELECT set_config($1, $2, false) AS "x"', ['default_transaction_read_only', 'off'], ONE_TRIP);
    expect((await c.query('SHOW search_path', [])).rows).toEqual(path);
    const made = await c.query('SELECT CAST(lo_from_bytea(0, CAST($1 AS bytea)) AS bigint) AS "oid"', ['x'], ONE_TRIP);
    expect(
      (await c.query('SELECT count(*)::int FROM pg_largeobject_metadata WHERE oid = $1::oid', [made.rows[0][0]])).rows,
    ).toEqual([[0]]);
  });

  it('a failed or timed-out read leaves the one pooled connection clean for the next', async () => {
    expect(await connectorFailure(() => c.query('SELECT 1 / CAST($1 AS integer) AS "x"', [0], ONE_TRIP))).toMatchObject(
      {
        kind: 'query',
        message: expect.stringContaining('division by zero'),
      },
    );
    expect((await c.query('SELECT CAST($1 AS integer) + 1 AS "n"', [41], ONE_TRIP)).rows).toEqual([[42]]);
    await expect(
      c.query('SELECT pg_sleep(CAST($1 AS float8)) AS "s"', [10], { ...ONE_TRIP, timeoutMs: 300 }),
    ).rejects.toMatchObject({ kind: 'timeout' });
    expect((await c.query('SELECT CAST($1 AS integer) + 1 AS "n"', [1], ONE_TRIP)).rows).toEqual([[2]]);
    expect((await c.query('SHOW transaction_read_only', [])).rows).toEqual([['off']]);
  });

  it('a NUL in a value is refused by the server as over the extended protocol, and nothing runs', async () => {
    const nul = await connectorFailure(() => c.query(byName, ['a\u0000; COMMIT'], ONE_TRIP));
    expect(nul).toMatchObject({ kind: 'query' });
    expect(nul.message).toBe((await connectorFailure(() => c.query(byName, ['a\u0000; COMMIT'], EXTENDED))).message);
    expect((await c.query(`SELECT count(*)::int FROM public.${table}`, [])).rows).toEqual([[4]]);
  });

  it('sends a text not shaped as the compiler makes it as before: one statement, nothing after a COMMIT', async () => {
    expect((await c.query(`SELECT 'a' AS "x" WHERE CAST($1 AS integer) = 1`, [1], ONE_TRIP)).rows).toEqual([['a']]);
    expect(
      await connectorFailure(() => c.query(`SELECT 1; COMMIT; DELETE FROM public.${table}`, [], ONE_TRIP)),
    ).toMatchObject({
      kind: 'query',
      message: expect.stringContaining('multiple commands'),
    });
    expect((await c.query(`SELECT count(*)::int FROM public.${table}`, [])).rows).toEqual([[4]]);
  });
});
