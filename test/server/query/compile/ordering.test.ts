import { describe, expect, it } from 'vitest';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import { allDialects, dialectIs, failure, request, salesModel, shelf } from './fixtures';

const model = salesModel();
const shelves = {
  rows: [shelf('p', '[sales.product]')],
  series: [shelf('r', '[regions.name]')],
  columns: [shelf('s', 'SUM([sales.amount])')],
};

describe('ORDER BY and pages', () => {
  it('orders by the aliases of the sorted shelf fields, group keys as tie-breakers, a page plus one row', () => {
    expect(
      allDialects(
        model,
        request({
          ...shelves,
          sorts: [
            { field_id: 's', direction: 'desc' },
            { field_id: 'r', direction: 'asc' },
          ],
          page: 3,
          pageSize: 20,
        }),
      ),
    ).toMatchInlineSnapshot(`
      {
        "clickhouse": "SELECT \`t0\`.\`product\` AS \`__c0\`, \`t1\`.\`name\` AS \`__c1\`, sum(toNullable(\`t0\`.\`amount_rub\`)) AS \`__c2\` FROM \`public\`.\`sales_table\` AS \`t0\` ALL LEFT JOIN \`regions\` AS \`t1\` ON (\`t0\`.\`region_id\` = \`t1\`.\`id\`) GROUP BY \`__c0\`, \`__c1\` ORDER BY \`__c2\` DESC NULLS LAST, \`__c1\` ASC NULLS FIRST, \`__c0\` ASC NULLS FIRST LIMIT 21 OFFSET 40 SETTINGS join_use_nulls = 1",
        "duckdb": {
          "params": [],
          "sql": "SELECT "t0"."product" AS "__c0", "t1"."name" AS "__c1", SUM("t0"."amount_rub") AS "__c2" FROM "public"."sales_table" AS "t0" LEFT JOIN "regions" AS "t1" ON ("t0"."region_id" = "t1"."id") GROUP BY 1, 2 ORDER BY "__c2" DESC NULLS LAST, "__c1" ASC NULLS FIRST, "__c0" ASC NULLS FIRST LIMIT 21 OFFSET 40",
        },
        "mysql": {
          "params": [],
          "sql": "SELECT \`t0\`.\`product\` AS \`__c0\`, \`t1\`.\`name\` AS \`__c1\`, SUM(\`t0\`.\`amount_rub\`) AS \`__c2\` FROM \`public\`.\`sales_table\` AS \`t0\` LEFT JOIN \`regions\` AS \`t1\` ON (\`t0\`.\`region_id\` = \`t1\`.\`id\`) GROUP BY 1, 2 ORDER BY \`__c2\` DESC, \`__c1\` ASC, \`__c0\` ASC LIMIT 21 OFFSET 40",
        },
        "postgresql": {
          "params": [],
          "sql": "SELECT "t0"."product" AS "__c0", "t1"."name" AS "__c1", SUM("t0"."amount_rub") AS "__c2" FROM "public"."sales_table" AS "t0" LEFT JOIN "regions" AS "t1" ON ("t0"."region_id" = "t1"."id") GROUP BY 1, 2 ORDER BY "__c2" DESC NULLS LAST, "__c1" ASC NULLS FIRST, "__c0" ASC NULLS FIRST LIMIT 21 OFFSET 40",
        },
      }
    `);
  });

  it('an unknown sort id is a 422 on that sort', () => {
    expect(
      failure(() =>
        compileWidgetQuery(
          model,
          request({ ...shelves, sorts: [{ field_id: "s'; DROP TABLE x; --", direction: 'asc' }] }),
          dialectIs('postgresql'),
        ),
      ),
    ).toEqual({
      status: 422,
      message: 'Ошибка валидации',
      errors: { 'sorts[0].fieldId': "Поле с id s'; DROP TABLE x; -- не найдено на полках виджета" },
    });
  });

  it('page sizes above 10 000 and pages below 1 are 422', () => {
    expect(
      failure(() => compileWidgetQuery(model, request({ ...shelves, pageSize: 10_001 }), dialectIs('postgresql')))
        .errors,
    ).toEqual({
      pageSize: 'must be less than or equal to 10000',
    });
    expect(
      failure(() => compileWidgetQuery(model, request({ ...shelves, page: 0 }), dialectIs('postgresql'))).errors,
    ).toEqual({
      page: 'must be greater than or equal to 1',
    });
    const q = compileWidgetQuery(model, request({ ...shelves, pageSize: 10_000, page: 2 }), dialectIs('clickhouse'));
    expect(q.sql).toMatch(/LIMIT 10001 OFFSET 10000 SETTINGS join_use_nulls = 1$/);
    expect(q.fetchLimit).toBe(10_001);
  });
});
