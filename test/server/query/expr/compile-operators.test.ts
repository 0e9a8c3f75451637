import { describe, expect, it } from 'vitest';
import { compileExpression, parseExpression } from '../../../../server/query/expr';
import { allDialects, context, errorOf, sql } from './helpers';

describe('literals are bound, never written into the SQL', () => {
  it('binds numbers, strings and dates with a typed placeholder', () => {
    expect(allDialects("IF([t.flag], 'it''s', STR(12.5 + 3000000000 + 7))")).toMatchInlineSnapshot(`
      {
        "clickhouse": "CASE WHEN \`t\`.\`flag\` THEN 'it\\'s' ELSE toString(((toFloat64(12.5) + 3000000000) + 7)) END",
        "duckdb": {
          "sql": "CASE WHEN "t"."flag" THEN $1 ELSE CAST(((CAST($2 AS DOUBLE) + CAST($3 AS BIGINT)) + CAST($4 AS INTEGER)) AS VARCHAR) END",
          "values": [
            "it's",
            12.5,
            3000000000,
            7,
          ],
        },
        "mysql": {
          "sql": "CASE WHEN \`t\`.\`flag\` THEN ? ELSE CAST(((? + ?) + ?) AS CHAR) END",
          "values": [
            "it's",
            12.5,
            3000000000,
            7,
          ],
        },
        "postgresql": {
          "sql": "CASE WHEN "t"."flag" THEN $1 ELSE CAST(((CAST($2 AS numeric) + CAST($3 AS bigint)) + CAST($4 AS integer)) AS text) END",
          "values": [
            "it's",
            12.5,
            3000000000,
            7,
          ],
        },
      }
    `);
  });

  it('writes dates and datetimes through the sink with a cast', () => {
    expect(allDialects('[t.d] >= #2024-01-31# AND [t.ts] < #2024-02-01 10:30:00#')).toMatchInlineSnapshot(`
      {
        "clickhouse": "((\`t\`.\`d\` >= toDate('2024-01-31')) AND (\`t\`.\`ts\` < toDateTime('2024-02-01 10:30:00')))",
        "duckdb": {
          "sql": "(("t"."d" >= CAST($1 AS DATE)) AND ("t"."ts" < CAST($2 AS TIMESTAMP)))",
          "values": [
            "2024-01-31",
            "2024-02-01 10:30:00",
          ],
        },
        "mysql": {
          "sql": "((\`t\`.\`d\` >= CAST(? AS DATE)) AND (\`t\`.\`ts\` < CAST(? AS DATETIME)))",
          "values": [
            "2024-01-31",
            "2024-02-01 10:30:00",
          ],
        },
        "postgresql": {
          "sql": "(("t"."d" >= CAST($1 AS date)) AND ("t"."ts" < CAST($2 AS timestamp)))",
          "values": [
            "2024-01-31",
            "2024-02-01 10:30:00",
          ],
        },
      }
    `);
  });

  it('writes TRUE, FALSE and NULL as keywords (1/0 in ClickHouse)', () => {
    expect(allDialects('IF([t.a] IS NULL, TRUE, FALSE)')).toMatchInlineSnapshot(`
      {
        "clickhouse": "CASE WHEN (\`t\`.\`a\` IS NULL) THEN 1 ELSE 0 END",
        "duckdb": {
          "sql": "CASE WHEN ("t"."a" IS NULL) THEN TRUE ELSE FALSE END",
          "values": [],
        },
        "mysql": {
          "sql": "CASE WHEN (\`t\`.\`a\` IS NULL) THEN TRUE ELSE FALSE END",
          "values": [],
        },
        "postgresql": {
          "sql": "CASE WHEN ("t"."a" IS NULL) THEN TRUE ELSE FALSE END",
          "values": [],
        },
      }
    `);
  });

  it('keeps a string compared with a column as an untyped placeholder, casts it elsewhere', () => {
    expect(
      sql('postgresql', "[t.s] = 'a' OR 'b' = [t.s] OR [t.s] IN ('c', 'd') OR CONCAT('e', [t.s]) = 'f' OR 'g' = 'h'"),
    ).toMatchInlineSnapshot(`
      {
        "sql": "((((("t"."s" = $1) OR ($2 = "t"."s")) OR ("t"."s" IN ($3, $4))) OR (CONCAT(CAST($5 AS text), "t"."s") = $6)) OR (CAST($7 AS text) = CAST($8 AS text)))",
        "values": [
          "a",
          "b",
          "c",
          "d",
          "e",
          "f",
          "g",
          "h",
        ],
      }
    `);
  });

  it('leaves strings untyped where they share a type with a non-literal value (CASE, IF, IFNULL, COALESCE)', () => {
    expect(
      sql('postgresql', "COALESCE([t.s], 'x') = IF([t.b], 'y', 'z') OR CASE WHEN [t.b] THEN [t.s] ELSE 'w' END = 'v'")
        .sql,
    ).toMatchInlineSnapshot(
      `"((COALESCE("t"."s", $1) = CASE WHEN "t"."b" THEN CAST($2 AS text) ELSE CAST($3 AS text) END) OR (CASE WHEN "t"."b" THEN "t"."s" ELSE $4 END = $5))"`,
    );
  });

  it('never lets a hostile string into the SQL text', () => {
    const hostile = "'); DROP TABLE users; --";
    const text = `[t.a] = '${hostile.replaceAll("'", "''")}'`;
    for (const dialect of ['postgresql', 'mysql', 'duckdb'] as const) {
      const out = sql(dialect, text);
      expect(out.sql).not.toContain('DROP');
      expect(out.values).toEqual([hostile]);
    }
    expect(sql('clickhouse', text).sql).toBe("(`t`.`a` = '\\'); DROP TABLE users; --')");
  });
});

describe('references', () => {
  it('asks the caller for the quoted column', () => {
    expect(sql('postgresql', '[Заказы.Сумма "нетто"]').sql).toBe('"Заказы"."Сумма ""нетто"""');
    expect(sql('mysql', '[orders.a`b]').sql).toBe('`orders`.`a``b`');
  });

  it('compiles calculated fields inline, parenthesized', () => {
    expect(sql('postgresql', '[margin] * 100', { margin: '[t.p] - [t.c]' }).sql).toMatchInlineSnapshot(
      `"((("t"."p" - "t"."c")) * CAST($1 AS integer))"`,
    );
  });

  it('rejects a cycle of calculated fields', () => {
    const defs = { a: '[b] + 1', b: '[c] * 2', c: '[a]' };
    expect(errorOf(() => sql('postgresql', '[a]', defs)).message).toBe(
      'Ошибка в выражении: циклическая ссылка между вычисляемыми полями: [a] → [b] → [c] → [a] (строка 1, позиция 1)',
    );
  });

  it('rejects an aggregate calculated field inside an aggregate', () => {
    expect(errorOf(() => sql('postgresql', 'AVG([total])', { total: 'SUM([t.a])' })).message).toContain(
      'агрегатная функция SUM не может стоять внутри AVG',
    );
  });

  it('points an error inside a calculated field at the reference and names the field', () => {
    expect(errorOf(() => sql('postgresql', '1 + AVG([total])', { total: 'SUM([t.a])' }))).toEqual({
      message:
        'Ошибка в выражении: в вычисляемом поле [total]: агрегатная функция SUM не может стоять внутри AVG (строка 1, позиция 9)',
      position: { line: 1, column: 9 },
    });
  });

  it('lets the same calculated field appear twice side by side', () => {
    expect(sql('mysql', '[x] + [x]', { x: '[t.a] * 2' })).toMatchInlineSnapshot(`
      {
        "sql": "(((\`t\`.\`a\` * ?)) + ((\`t\`.\`a\` * ?)))",
        "values": [
          2,
          2,
        ],
      }
    `);
  });

  it('passes the caller’s error for an unknown column through', () => {
    const { ctx } = context('postgresql');
    ctx.column = () => {
      throw new Error('unknown column');
    };
    expect(() => compileExpression(parseExpression('[t.nope]'), ctx)).toThrow('unknown column');
  });
});

describe('arithmetic', () => {
  it('parenthesizes every operation, so precedence survives in any dialect', () => {
    expect(sql('postgresql', '-([t.a] + [t.b]) * [t.c] - 1').sql).toMatchInlineSnapshot(
      `"(((-("t"."a" + "t"."b")) * "t"."c") - CAST($1 AS integer))"`,
    );
  });

  it('makes / true division with NULL on a zero divisor', () => {
    expect(allDialects('[t.a] / [t.b]')).toMatchInlineSnapshot(`
      {
        "clickhouse": "(toFloat64(\`t\`.\`a\`) / nullIf(\`t\`.\`b\`, 0))",
        "duckdb": {
          "sql": "(CAST("t"."a" AS DOUBLE) / NULLIF("t"."b", 0))",
          "values": [],
        },
        "mysql": {
          "sql": "(CAST(\`t\`.\`a\` AS DOUBLE) / NULLIF(\`t\`.\`b\`, 0))",
          "values": [],
        },
        "postgresql": {
          "sql": "(CAST("t"."a" AS double precision) / NULLIF("t"."b", 0))",
          "values": [],
        },
      }
    `);
  });

  it('makes % NULL on a zero divisor', () => {
    expect(allDialects('[t.a] % 3')).toMatchInlineSnapshot(`
      {
        "clickhouse": "if(3 = 0, NULL, \`t\`.\`a\` % if(3 = 0, 1, 3))",
        "duckdb": {
          "sql": "("t"."a" % NULLIF(CAST($1 AS INTEGER), 0))",
          "values": [
            3,
          ],
        },
        "mysql": {
          "sql": "(\`t\`.\`a\` % NULLIF(?, 0))",
          "values": [
            3,
          ],
        },
        "postgresql": {
          "sql": "("t"."a" % NULLIF(CAST($1 AS integer), 0))",
          "values": [
            3,
          ],
        },
      }
    `);
  });

  it('writes a negative number as one bound value', () => {
    expect(allDialects('[t.a] - -5')).toMatchInlineSnapshot(`
      {
        "clickhouse": "(\`t\`.\`a\` - (-5))",
        "duckdb": {
          "sql": "("t"."a" - CAST($1 AS INTEGER))",
          "values": [
            -5,
          ],
        },
        "mysql": {
          "sql": "(\`t\`.\`a\` - ?)",
          "values": [
            -5,
          ],
        },
        "postgresql": {
          "sql": "("t"."a" - CAST($1 AS integer))",
          "values": [
            -5,
          ],
        },
      }
    `);
  });
});

describe('comparison and logic', () => {
  it('writes != as <>, and AND/OR/NOT', () => {
    expect(sql('postgresql', 'NOT ([t.a] != 1 AND [t.b] <= 2) OR [t.c] >= 3').sql).toMatchInlineSnapshot(
      `"((NOT (("t"."a" <> CAST($1 AS integer)) AND ("t"."b" <= CAST($2 AS integer)))) OR ("t"."c" >= CAST($3 AS integer)))"`,
    );
  });

  it('writes IN, NOT IN, BETWEEN and IS NULL', () => {
    expect(allDialects("[t.a] NOT IN (1, 2) AND [t.b] BETWEEN 0.5 AND 9 AND [t.c] IS NOT NULL AND [t.s] IN ('x')"))
      .toMatchInlineSnapshot(`
      {
        "clickhouse": "((((\`t\`.\`a\` NOT IN (1, 2)) AND (\`t\`.\`b\` BETWEEN toFloat64(0.5) AND 9)) AND (\`t\`.\`c\` IS NOT NULL)) AND (\`t\`.\`s\` IN ('x')))",
        "duckdb": {
          "sql": "(((("t"."a" NOT IN (CAST($1 AS INTEGER), CAST($2 AS INTEGER))) AND ("t"."b" BETWEEN CAST($3 AS DOUBLE) AND CAST($4 AS INTEGER))) AND ("t"."c" IS NOT NULL)) AND ("t"."s" IN ($5)))",
          "values": [
            1,
            2,
            0.5,
            9,
            "x",
          ],
        },
        "mysql": {
          "sql": "((((\`t\`.\`a\` NOT IN (?, ?)) AND (\`t\`.\`b\` BETWEEN ? AND ?)) AND (\`t\`.\`c\` IS NOT NULL)) AND (\`t\`.\`s\` IN (?)))",
          "values": [
            1,
            2,
            0.5,
            9,
            "x",
          ],
        },
        "postgresql": {
          "sql": "(((("t"."a" NOT IN (CAST($1 AS integer), CAST($2 AS integer))) AND ("t"."b" BETWEEN CAST($3 AS numeric) AND CAST($4 AS integer))) AND ("t"."c" IS NOT NULL)) AND ("t"."s" IN ($5)))",
          "values": [
            1,
            2,
            0.5,
            9,
            "x",
          ],
        },
      }
    `);
  });

  it('keeps the user’s LIKE pattern and names backslash as the escape in DuckDB', () => {
    expect(allDialects("[t.s] LIKE 'a\\_%' AND [t.s] NOT LIKE '%z'")).toMatchInlineSnapshot(`
      {
        "clickhouse": "((\`t\`.\`s\` LIKE 'a\\\\_%') AND (\`t\`.\`s\` NOT LIKE '%z'))",
        "duckdb": {
          "sql": "(("t"."s" LIKE $1 ESCAPE '\\') AND ("t"."s" NOT LIKE $2 ESCAPE '\\'))",
          "values": [
            "a\\_%",
            "%z",
          ],
        },
        "mysql": {
          "sql": "((\`t\`.\`s\` LIKE ?) AND (\`t\`.\`s\` NOT LIKE ?))",
          "values": [
            "a\\_%",
            "%z",
          ],
        },
        "postgresql": {
          "sql": "(("t"."s" LIKE $1) AND ("t"."s" NOT LIKE $2))",
          "values": [
            "a\\_%",
            "%z",
          ],
        },
      }
    `);
  });
});

describe('CASE', () => {
  it('writes CASE with an explicit ELSE NULL when none is given', () => {
    expect(allDialects("CASE WHEN [t.a] > 0 THEN 'pos' WHEN [t.a] < 0 THEN 'neg' END")).toMatchInlineSnapshot(`
      {
        "clickhouse": "CASE WHEN (\`t\`.\`a\` > 0) THEN 'pos' WHEN (\`t\`.\`a\` < 0) THEN 'neg' ELSE NULL END",
        "duckdb": {
          "sql": "CASE WHEN ("t"."a" > CAST($1 AS INTEGER)) THEN CAST($2 AS VARCHAR) WHEN ("t"."a" < CAST($3 AS INTEGER)) THEN CAST($4 AS VARCHAR) ELSE NULL END",
          "values": [
            0,
            "pos",
            0,
            "neg",
          ],
        },
        "mysql": {
          "sql": "CASE WHEN (\`t\`.\`a\` > ?) THEN ? WHEN (\`t\`.\`a\` < ?) THEN ? ELSE NULL END",
          "values": [
            0,
            "pos",
            0,
            "neg",
          ],
        },
        "postgresql": {
          "sql": "CASE WHEN ("t"."a" > CAST($1 AS integer)) THEN CAST($2 AS text) WHEN ("t"."a" < CAST($3 AS integer)) THEN CAST($4 AS text) ELSE NULL END",
          "values": [
            0,
            "pos",
            0,
            "neg",
          ],
        },
      }
    `);
  });

  it('writes simple CASE as equality conditions, binding the subject each time', () => {
    expect(sql('mysql', "CASE [t.a] WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END")).toMatchInlineSnapshot(`
      {
        "sql": "CASE WHEN (\`t\`.\`a\` = ?) THEN ? WHEN (\`t\`.\`a\` = ?) THEN ? ELSE ? END",
        "values": [
          1,
          "one",
          2,
          "two",
          "many",
        ],
      }
    `);
  });
});

describe('MySQL positional placeholders', () => {
  it('binds values in the order their ? appear, even when the SQL reorders arguments', () => {
    const out = sql('mysql', "CONTAINS([t.s], 'needle') AND DATEADD('day', 7, #2024-01-01#) > [t.d]");
    expect(out).toMatchInlineSnapshot(`
      {
        "sql": "((LOCATE(?, \`t\`.\`s\`) > 0) AND (DATE_ADD(CAST(? AS DATE), INTERVAL ? DAY) > \`t\`.\`d\`))",
        "values": [
          "needle",
          "2024-01-01",
          7,
        ],
      }
    `);
  });

  it('binds an argument once per use when a function writes it twice', () => {
    expect(sql('mysql', "DATETRUNC('quarter', DATE('2024-05-05'))")).toMatchInlineSnapshot(`
      {
        "sql": "DATE_ADD(MAKEDATE(YEAR(CAST(? AS DATE)), 1), INTERVAL (QUARTER(CAST(? AS DATE)) - 1) QUARTER)",
        "values": [
          "2024-05-05",
          "2024-05-05",
        ],
      }
    `);
  });
});

describe('hand-built ASTs are checked too', () => {
  it('rejects unknown operators and functions instead of writing them out', () => {
    const { ctx } = context('postgresql');
    const one = { kind: 'literal', type: 'integer', value: 1 } as const;
    const badOp = { kind: 'binary', op: '; DROP TABLE t; --', left: one, right: one } as unknown as Parameters<
      typeof compileExpression
    >[0];
    expect(errorOf(() => compileExpression(badOp, ctx)).message).toContain('неизвестный оператор');
    expect(errorOf(() => compileExpression({ kind: 'call', name: 'PG_SLEEP', args: [one] }, ctx)).message).toContain(
      'неизвестная функция PG_SLEEP',
    );
    expect(
      errorOf(() =>
        compileExpression(
          { kind: 'call', name: 'DATETRUNC', args: [{ kind: 'literal', type: 'string', value: "day'); --" }, one] },
          ctx,
        ),
      ).message,
    ).toContain('первый аргумент DATETRUNC');
  });
});
