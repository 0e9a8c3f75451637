import { describe, expect, it } from 'vitest';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import { allDialects, dialectIs, failure, request, salesModel, shelf } from './fixtures';

const model = salesModel();
const pg = (req: Parameters<typeof compileWidgetQuery>[1]) => compileWidgetQuery(model, req, dialectIs('postgresql'));

describe('shelves become the SELECT list', () => {
  it('groups by the categories when a measure aggregates', () => {
    expect(
      allDialects(
        model,
        request({
          rows: [shelf('p', '[sales.product]')],
          series: [shelf('y', 'YEAR([sales.sold_on])')],
          columns: [shelf('s', 'SUM([sales.amount])')],
        }),
      ),
    ).toMatchInlineSnapshot(`
      {
        "clickhouse": "SELECT \`t0\`.\`product\` AS \`__c0\`, toYear(\`t0\`.\`sold_on\`) AS \`__c1\`, sum(toNullable(\`t0\`.\`amount_rub\`)) AS \`__c2\` FROM \`public\`.\`sales_table\` AS \`t0\` GROUP BY \`__c0\`, \`__c1\` ORDER BY \`__c0\` ASC NULLS FIRST, \`__c1\` ASC NULLS FIRST LIMIT 101",
        "duckdb": {
          "params": [],
          "sql": "SELECT "t0"."product" AS "__c0", year("t0"."sold_on") AS "__c1", SUM("t0"."amount_rub") AS "__c2" FROM "public"."sales_table" AS "t0" GROUP BY 1, 2 ORDER BY "__c0" ASC NULLS FIRST, "__c1" ASC NULLS FIRST LIMIT 101",
        },
        "mysql": {
          "params": [],
          "sql": "SELECT \`t0\`.\`product\` AS \`__c0\`, YEAR(\`t0\`.\`sold_on\`) AS \`__c1\`, SUM(\`t0\`.\`amount_rub\`) AS \`__c2\` FROM \`public\`.\`sales_table\` AS \`t0\` GROUP BY 1, 2 ORDER BY \`__c0\` ASC, \`__c1\` ASC LIMIT 101",
        },
        "postgresql": {
          "params": [],
          "sql": "SELECT "t0"."product" AS "__c0", CAST(EXTRACT(YEAR FROM "t0"."sold_on") AS integer) AS "__c1", SUM("t0"."amount_rub") AS "__c2" FROM "public"."sales_table" AS "t0" GROUP BY 1, 2 ORDER BY "__c0" ASC NULLS FIRST, "__c1" ASC NULLS FIRST LIMIT 101",
        },
      }
    `);
  });

  it('reads rows as they are when nothing aggregates (no GROUP BY, no implicit order)', () => {
    const q = pg(
      request({ type: 'table', rows: [shelf('p', '[sales.product]')], columns: [shelf('a', '[sales.amount] * 2')] }),
    );
    expect(q.sql).toBe(
      'SELECT "t0"."product" AS "__c0", ("t0"."amount_rub" * CAST($1 AS integer)) AS "__c1" FROM "public"."sales_table" AS "t0" LIMIT 101',
    );
    expect(q.params).toEqual([2]);
    expect(q.columns).toEqual([
      { key: 'p', alias: '__c0' },
      { key: 'a', alias: '__c1' },
    ]);
  });

  it("applies a field's default aggregation to a bare field on the measure shelf", () => {
    const q = pg(request({ rows: [shelf('p', '[sales.product]')], columns: [shelf('q', '[sales.qty]')] }));
    expect(q.sql).toContain('SUM("t0"."qty") AS "__c1"');
    expect(q.sql).toContain('GROUP BY 1');
  });

  it('builds the reference from table and field when sql is empty', () => {
    const q = pg(request({ rows: [{ id: 'p', table: 'sales', field: 'product' }], columns: [shelf('n', 'COUNT()')] }));
    expect(q.sql).toMatch(/^SELECT "t0"."product" AS "__c0", COUNT\(\*\) AS "__c1"/);
  });

  it('groups a non-aggregated measure with the categories when another measure aggregates', () => {
    const q = pg(
      request({
        rows: [shelf('p', '[sales.product]')],
        columns: [shelf('d', '[sales.sold_on]'), shelf('s', 'SUM([sales.amount])')],
      }),
    );
    expect(q.sql).toContain('GROUP BY 1, 2');
  });

  it('answers one row of totals for measures without categories', () => {
    const q = pg(
      request({ type: 'kpi', columns: [shelf('s', 'SUM([sales.amount])'), shelf('n', 'COUNTD([sales.product])')] }),
    );
    expect(q.sql).toBe(
      'SELECT SUM("t0"."amount_rub") AS "__c0", COUNT(DISTINCT "t0"."product") AS "__c1" FROM "public"."sales_table" AS "t0" LIMIT 1',
    );
    expect(q.fetchLimit).toBe(1);
  });
});

describe('shelf errors are 422 naming the shelf field', () => {
  it('unknown field or object', () => {
    expect(
      failure(() => pg(request({ rows: [shelf('p', '[sales.nope]')], columns: [shelf('n', 'COUNT()')] }))),
    ).toEqual({
      status: 422,
      message: 'Ошибка валидации',
      errors: { 'rows[0].sql': 'Ошибка в выражении: поле [sales.nope] не найдено в датасете' },
    });
    expect(failure(() => pg(request({ columns: [shelf('n', 'SUM([nothing.amount])')] }))).errors).toEqual({
      'columns[0].sql': 'Ошибка в выражении: поле [nothing.amount] не найдено в датасете',
    });
  });

  it('type mismatches: SUM of a string, arithmetic on a date', () => {
    expect(
      failure(() => pg(request({ columns: [shelf('s', 'SUM([sales.product])')] }))).errors?.['columns[0].sql'],
    ).toMatch(/аргумент 1 функции SUM должен быть типа «число», а получено «строка»/);
    expect(
      failure(() => pg(request({ rows: [shelf('d', '[sales.sold_on] * 2')], columns: [] }))).errors?.['rows[0].sql'],
    ).toMatch(/не применяется к датам/);
  });

  it('an aggregate on a category shelf, a column outside the aggregate of a measure', () => {
    expect(failure(() => pg(request({ rows: [shelf('s', 'SUM([sales.amount])')] }))).errors).toEqual({
      'rows[0].sql':
        'Ошибка в выражении: агрегатная функция на полке категорий недопустима; поставьте показатель в columns',
    });
    expect(
      failure(() => pg(request({ columns: [shelf('s', 'SUM([sales.amount]) + [sales.qty]')] }))).errors?.[
        'columns[0].sql'
      ],
    ).toMatch(/поле \[sales.qty\] должно стоять внутри агрегатной функции/);
    expect(
      failure(() => pg(request({ columns: [shelf('s', 'SUM(SUM([sales.amount]))')] }))).errors?.['columns[0].sql'],
    ).toMatch(/не может стоять внутри SUM/);
  });

  it('syntax errors, blank shelves, repeated ids, empty shelves', () => {
    expect(
      failure(() => pg(request({ columns: [shelf('s', 'SUM([sales.amount]')] }))).errors?.['columns[0].sql'],
    ).toMatch(/^Ошибка в выражении/);
    expect(failure(() => pg(request({ columns: [{ id: 's' }] }))).errors).toEqual({
      'columns[0].sql': 'must not be blank',
    });
    expect(
      failure(() => pg(request({ rows: [shelf('x', '[sales.product]')], columns: [shelf('x', 'COUNT()')] }))).errors,
    ).toEqual({
      'columns[0].id': 'id x уже занят полем rows[0]',
    });
    expect(failure(() => pg(request({}))).errors).toEqual({ columns: 'на полках нет ни одного поля' });
  });
});
