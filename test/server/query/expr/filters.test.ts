import { describe, expect, it } from 'vitest';
import { compileFilter, type Dialect, type WidgetFilter } from '../../../../server/query/expr';
import { context, errorOf } from './helpers';

function filter(dialect: Dialect, f: WidgetFilter) {
  const { ctx, params } = context(dialect, { Маржа: '[t.price] - [t.cost]' });
  return { sql: compileFilter(f, ctx), values: params.values };
}

const pg = (f: WidgetFilter) => filter('postgresql', f);

describe('in / not_in', () => {
  it('binds each value, leaving strings untyped so they take the column type', () => {
    expect(pg({ sql: '[t.city]', op: 'in', values: ['Москва', "O'Hare"], value_type: 'string' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "("t"."city" IN ($1, $2))",
        "values": [
          "Москва",
          "O'Hare",
        ],
      }
    `);
  });

  it('is the default value_type string', () => {
    expect(filter('mysql', { sql: '[t.city]', op: 'not_in', values: ['a'] })).toMatchInlineSnapshot(`
      {
        "sql": "(\`t\`.\`city\` NOT IN (?))",
        "values": [
          "a",
        ],
      }
    `);
  });

  it('compiles an empty list to a false condition (and NOT IN to a true one)', () => {
    expect(pg({ sql: '[t.city]', op: 'in', values: [], value_type: 'string' })).toEqual({ sql: '(1 = 0)', values: [] });
    expect(pg({ sql: '[t.city]', op: 'not_in', values: [], value_type: 'string' })).toEqual({
      sql: '(1 = 1)',
      values: [],
    });
  });

  it('matches NULL when the list holds null', () => {
    expect(filter('mysql', { sql: '[t.city]', op: 'in', values: ['a', null], value_type: 'string' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "((\`t\`.\`city\` IN (?)) OR (\`t\`.\`city\` IS NULL))",
        "values": [
          "a",
        ],
      }
    `);
    expect(pg({ sql: '[t.city]', op: 'not_in', values: [null], value_type: 'string' }).sql).toBe(
      '("t"."city" IS NOT NULL)',
    );
  });

  it('converts values by value_type', () => {
    expect(pg({ sql: '[t.n]', op: 'in', values: [1, '2', 2.5, ' 3e2 '], value_type: 'number' })).toMatchInlineSnapshot(`
      {
        "sql": "("t"."n" IN (CAST($1 AS integer), CAST($2 AS integer), CAST($3 AS numeric), CAST($4 AS integer)))",
        "values": [
          1,
          2,
          2.5,
          300,
        ],
      }
    `);
  });

  it('inlines escaped values for ClickHouse', () => {
    expect(
      filter('clickhouse', {
        sql: '[t.city]',
        op: 'in',
        values: ["x'); DROP TABLE t; --", 'y\\'],
        value_type: 'string',
      }),
    ).toMatchInlineSnapshot(`
      {
        "sql": "(\`t\`.\`city\` IN ('x\\'); DROP TABLE t; --', 'y\\\\'))",
        "values": [],
      }
    `);
  });
});

describe('comparisons', () => {
  it('compiles eq, ne, gt, gte, lt, lte against the filter expression', () => {
    const ops = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
    expect(ops.map((op) => pg({ sql: '[t.n] * 2', op, values: [10], value_type: 'integer' }).sql))
      .toMatchInlineSnapshot(`
      [
        "(("t"."n" * CAST($1 AS integer)) = CAST($2 AS integer))",
        "(("t"."n" * CAST($1 AS integer)) <> CAST($2 AS integer))",
        "(("t"."n" * CAST($1 AS integer)) > CAST($2 AS integer))",
        "(("t"."n" * CAST($1 AS integer)) >= CAST($2 AS integer))",
        "(("t"."n" * CAST($1 AS integer)) < CAST($2 AS integer))",
        "(("t"."n" * CAST($1 AS integer)) <= CAST($2 AS integer))",
      ]
    `);
  });

  it('reads eq/ne null as IS NULL / IS NOT NULL', () => {
    expect(pg({ sql: '[t.n]', op: 'eq', values: [null], value_type: 'integer' }).sql).toBe('("t"."n" IS NULL)');
    expect(pg({ sql: '[t.n]', op: 'ne', values: [null], value_type: 'integer' }).sql).toBe('("t"."n" IS NOT NULL)');
  });

  it('casts dates, datetimes and booleans by value_type', () => {
    expect(filter('duckdb', { sql: '[t.d]', op: 'gte', values: ['2024-01-31'], value_type: 'date' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "("t"."d" >= CAST($1 AS DATE))",
        "values": [
          "2024-01-31",
        ],
      }
    `);
    expect(filter('mysql', { sql: '[t.ts]', op: 'lt', values: ['2024-01-31T10:00:00.000Z'], value_type: 'datetime' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "(\`t\`.\`ts\` < CAST(? AS DATETIME))",
        "values": [
          "2024-01-31 10:00:00",
        ],
      }
    `);
    expect(filter('clickhouse', { sql: '[t.ok]', op: 'eq', values: ['true'], value_type: 'boolean' }).sql).toBe(
      '(`t`.`ok` = 1)',
    );
  });

  it('filters on a calculated field and on an aggregate', () => {
    expect(pg({ sql: 'SUM([Маржа])', op: 'gt', values: [0.5], value_type: 'float' })).toMatchInlineSnapshot(`
      {
        "sql": "(SUM((("t"."price" - "t"."cost"))) > CAST($1 AS numeric))",
        "values": [
          0.5,
        ],
      }
    `);
  });
});

describe('between', () => {
  it('binds both bounds', () => {
    expect(filter('mysql', { sql: '[t.d]', op: 'between', values: ['2024-01-01', '2024-12-31'], value_type: 'date' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "(\`t\`.\`d\` BETWEEN CAST(? AS DATE) AND CAST(? AS DATE))",
        "values": [
          "2024-01-01",
          "2024-12-31",
        ],
      }
    `);
  });

  it('becomes one-sided when a bound is null', () => {
    expect(pg({ sql: '[t.n]', op: 'between', values: [null, 5], value_type: 'integer' }).sql).toBe(
      '("t"."n" <= CAST($1 AS integer))',
    );
    expect(pg({ sql: '[t.n]', op: 'between', values: [1, null], value_type: 'integer' }).sql).toBe(
      '("t"."n" >= CAST($1 AS integer))',
    );
  });
});

describe('contains / starts_with', () => {
  it('escapes LIKE wildcards in the value', () => {
    expect(pg({ sql: '[t.s]', op: 'contains', values: ['50%_off\\'], value_type: 'string' })).toMatchInlineSnapshot(`
      {
        "sql": "("t"."s" LIKE $1)",
        "values": [
          "%50\\%\\_off\\\\%",
        ],
      }
    `);
    expect(filter('duckdb', { sql: '[t.s]', op: 'starts_with', values: ['a_'], value_type: 'string' }))
      .toMatchInlineSnapshot(`
      {
        "sql": "("t"."s" LIKE $1 ESCAPE '\\')",
        "values": [
          "a\\_%",
        ],
      }
    `);
    expect(
      filter('clickhouse', { sql: '[t.s]', op: 'contains', values: ["it's 100%"], value_type: 'string' }).sql,
    ).toBe("(`t`.`s` LIKE '%it\\'s 100\\\\%%')");
  });
});

describe('is_null / is_not_null', () => {
  it('needs no values', () => {
    expect(pg({ sql: '[t.s]', op: 'is_null', values: [], value_type: 'string' }).sql).toBe('("t"."s" IS NULL)');
    expect(pg({ sql: 'UPPER([t.s])', op: 'is_not_null', value_type: 'string' }).sql).toBe(
      '(UPPER("t"."s") IS NOT NULL)',
    );
  });
});

describe('bad filters', () => {
  const bad = (f: WidgetFilter) => errorOf(() => pg(f)).message;

  it('names a value that does not fit value_type', () => {
    expect(bad({ sql: '[t.n]', op: 'in', values: [1, 'abc'], value_type: 'number' })).toBe(
      'Ошибка в выражении: значение фильтра №2 «abc» не является числом',
    );
    expect(bad({ sql: '[t.n]', op: 'eq', values: [1.5], value_type: 'integer' })).toContain(
      '«1.5» не является целым числом',
    );
    expect(bad({ sql: '[t.d]', op: 'eq', values: ['31.01.2024'], value_type: 'date' })).toContain(
      '«31.01.2024» не является датой',
    );
    expect(bad({ sql: '[t.d]', op: 'eq', values: ['2024-02-30'], value_type: 'date' })).toContain('не является датой');
    expect(bad({ sql: '[t.d]', op: 'eq', values: ['2024-01-01 25:00'], value_type: 'datetime' })).toContain(
      'не является датой и временем',
    );
    expect(bad({ sql: '[t.b]', op: 'eq', values: ['yes'], value_type: 'boolean' })).toContain(
      '«yes» не является логическим значением',
    );
    expect(bad({ sql: '[t.s]', op: 'eq', values: [{ a: 1 }], value_type: 'string' })).toContain(
      '«{"a":1}» не является строкой',
    );
    expect(bad({ sql: '[t.n]', op: 'eq', values: [Infinity], value_type: 'float' })).toContain('не является числом');
  });

  it('rejects unknown ops and value types', () => {
    expect(bad({ sql: '[t.n]', op: 'like', values: ['a'], value_type: 'string' })).toContain(
      'неизвестная операция фильтра «like»',
    );
    expect(bad({ sql: '[t.n]', op: 'eq', values: ['a'], value_type: 'text' })).toContain(
      'неизвестный тип значений фильтра «text»',
    );
  });

  it('rejects wrong value counts', () => {
    expect(bad({ sql: '[t.n]', op: 'eq', values: [1, 2], value_type: 'integer' })).toContain(
      'фильтр eq ожидает значений: 1, передано 2',
    );
    expect(bad({ sql: '[t.n]', op: 'between', values: [1], value_type: 'integer' })).toContain(
      'фильтр between ожидает значений: 2',
    );
    expect(bad({ sql: '[t.n]', op: 'between', values: [null, null], value_type: 'integer' })).toContain(
      'обе границы пустые',
    );
    expect(bad({ sql: '[t.n]', op: 'gt', values: [null], value_type: 'integer' })).toContain(
      'не сравнивает с пустым значением',
    );
  });

  it('rejects contains on non-strings', () => {
    expect(bad({ sql: '[t.n]', op: 'contains', values: [1], value_type: 'integer' })).toContain(
      'применяется к строковому значению',
    );
  });

  it('rejects an expression that does not parse, before any value is bound', () => {
    const { ctx, params } = context('postgresql');
    expect(
      errorOf(() => compileFilter({ sql: '[t.a]; DROP TABLE t', op: 'eq', values: ['x'] }, ctx)).message,
    ).toContain('точка с запятой не допускается');
    expect(params.values).toEqual([]);
  });
});
