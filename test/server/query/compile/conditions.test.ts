import { describe, expect, it } from 'vitest';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import { allDialects, dialectIs, failure, filter, request, salesModel, shelf } from './fixtures';

const base = salesModel();
const amountField = base.fields.find((f) => f.name === 'amount')!;
const productField = base.fields.find((f) => f.name === 'product')!;

describe('WHERE and HAVING', () => {
  it('AND-s dataset filters, saved and request filters; aggregates go to HAVING', () => {
    const model = salesModel({
      filters: [{ id: 1, fieldId: productField.id, op: 'ne', values: ['брак'], valueType: 'string' }],
    });
    expect(
      allDialects(
        model,
        request({
          rows: [shelf('p', '[sales.product]')],
          columns: [shelf('s', 'SUM([sales.amount])')],
          filters: [
            filter('savedFilters[0]', '[sales.sold_on]', 'between', ['2024-01-01', '2024-12-31'], 'date'),
            filter('filters[0]', '[sales.product]', 'in', ['a', "it's"]),
            filter('filters[1]', 'SUM([sales.amount])', 'gte', ['100.5'], 'number'),
          ],
        }),
      ),
    ).toMatchInlineSnapshot(`
      {
        "clickhouse": "SELECT \`t0\`.\`product\` AS \`__c0\`, sum(toNullable(\`t0\`.\`amount_rub\`)) AS \`__c1\` FROM \`public\`.\`sales_table\` AS \`t0\` WHERE ((\`t0\`.\`product\`) <> 'брак') AND (\`t0\`.\`sold_on\` BETWEEN toDate('2024-01-01') AND toDate('2024-12-31')) AND (\`t0\`.\`product\` IN ('a', 'it\\'s')) GROUP BY \`__c0\` HAVING (sum(toNullable(\`t0\`.\`amount_rub\`)) >= toFloat64(100.5)) ORDER BY \`__c0\` ASC NULLS FIRST LIMIT 101",
        "duckdb": {
          "params": [
            "брак",
            "2024-01-01",
            "2024-12-31",
            "a",
            "it's",
            100.5,
          ],
          "sql": "SELECT "t0"."product" AS "__c0", SUM("t0"."amount_rub") AS "__c1" FROM "public"."sales_table" AS "t0" WHERE (("t0"."product") <> $1) AND ("t0"."sold_on" BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE)) AND ("t0"."product" IN ($4, $5)) GROUP BY 1 HAVING (SUM("t0"."amount_rub") >= CAST($6 AS DOUBLE)) ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
        "mysql": {
          "params": [
            "брак",
            "2024-01-01",
            "2024-12-31",
            "a",
            "it's",
            100.5,
          ],
          "sql": "SELECT \`t0\`.\`product\` AS \`__c0\`, SUM(\`t0\`.\`amount_rub\`) AS \`__c1\` FROM \`public\`.\`sales_table\` AS \`t0\` WHERE ((\`t0\`.\`product\`) <> ?) AND (\`t0\`.\`sold_on\` BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)) AND (\`t0\`.\`product\` IN (?, ?)) GROUP BY 1 HAVING (SUM(\`t0\`.\`amount_rub\`) >= ?) ORDER BY \`__c0\` ASC LIMIT 101",
        },
        "postgresql": {
          "params": [
            "брак",
            "2024-01-01",
            "2024-12-31",
            "a",
            "it's",
            100.5,
          ],
          "sql": "SELECT "t0"."product" AS "__c0", SUM("t0"."amount_rub") AS "__c1" FROM "public"."sales_table" AS "t0" WHERE (("t0"."product") <> $1) AND ("t0"."sold_on" BETWEEN CAST($2 AS date) AND CAST($3 AS date)) AND ("t0"."product" IN ($4, $5)) GROUP BY 1 HAVING (SUM("t0"."amount_rub") >= CAST($6 AS numeric)) ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
      }
    `);
  });

  it('mutually exclusive filters compile to a condition that matches nothing', () => {
    const q = compileWidgetQuery(
      base,
      request({
        columns: [shelf('n', 'COUNT()')],
        filters: [
          filter('savedFilters[0]', '[sales.product]', 'in', ['a']),
          filter('filters[0]', '[sales.product]', 'in', ['b']),
        ],
      }),
      dialectIs('postgresql'),
    );
    expect(q.sql).toContain('WHERE ("t0"."product" IN ($1)) AND ("t0"."product" IN ($2))');
    expect(q.params).toEqual(['a', 'b']);
  });

  it('an aggregate filter groups the query even without aggregated measures', () => {
    const q = compileWidgetQuery(
      base,
      request({
        rows: [shelf('p', '[sales.product]')],
        filters: [filter('filters[0]', 'COUNT()', 'gt', [1], 'integer')],
      }),
      dialectIs('mysql'),
    );
    expect(q.sql).toBe(
      'SELECT `t0`.`product` AS `__c0` FROM `public`.`sales_table` AS `t0` GROUP BY 1 HAVING (COUNT(*) > ?) ORDER BY `__c0` ASC LIMIT 101',
    );
  });

  it('a dataset filter on a calculated field uses the dataset formula', () => {
    const model = salesModel({
      fields: [
        ...base.fields,
        {
          ...amountField,
          id: 99,
          objectId: null,
          kind: 'calculated',
          name: 'Крупная',
          column: null,
          formula: '[sales.amount] > 1000',
          primitiveType: 'boolean',
        },
      ],
      filters: [{ id: 1, fieldId: 99, op: 'eq', values: [true], valueType: 'boolean' }],
    });
    const q = compileWidgetQuery(model, request({ columns: [shelf('n', 'COUNT()')] }), dialectIs('postgresql'));
    expect(q.sql).toContain('WHERE ((("t0"."amount_rub" > CAST($1 AS integer))) = TRUE)');
  });

  it('reports bad filter values and expressions at the filter', () => {
    const req = (f: ReturnType<typeof filter>) => () =>
      compileWidgetQuery(base, request({ columns: [shelf('n', 'COUNT()')], filters: [f] }), dialectIs('postgresql'));
    expect(failure(req(filter('filters[0]', '[sales.amount]', 'gt', ['abc'], 'number'))).errors).toEqual({
      'filters[0].values': 'Ошибка в выражении: значение фильтра №1 «abc» не является числом',
    });
    expect(failure(req(filter('filters[0]', '[sales.nope]', 'in', ['x']))).errors).toEqual({
      'filters[0].sql': 'Ошибка в выражении: поле [sales.nope] не найдено в датасете',
    });
    expect(failure(req(filter('filters[0]', '[sales.amount]', 'between', [1]))).errors?.['filters[0].values']).toMatch(
      /ожидает значений: 2/,
    );
  });

  it("a broken dataset filter is the dataset's problem: 400", () => {
    const model = salesModel({ filters: [{ id: 1, fieldId: 123456, op: 'eq', values: [1], valueType: 'number' }] });
    expect(
      failure(() => compileWidgetQuery(model, request({ columns: [shelf('n', 'COUNT()')] }), dialectIs('postgresql'))),
    ).toEqual({
      status: 400,
      message: 'Фильтр датасета по полю (id 123456) не применяется: Ошибка в выражении: поле не найдено в датасете',
    });
  });
});
