import { describe, expect, it } from 'vitest';
import type { DatasetModel } from '../../../../server/query/compile/dataset-model';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import { allDialects, dialectIs, failure, object, physical, request, salesModel, shelf } from './fixtures';

/** orders -> customers -> cities, and a SQL object of the same source; `other` lives on source 2. */
function chain(joinType: 'inner' | 'left' = 'left'): DatasetModel {
  const fields = [
    physical(10, 'id', 'integer'),
    physical(10, 'customer_id', 'integer'),
    physical(10, 'total', 'float'),
    physical(11, 'id', 'integer'),
    physical(11, 'city_id', 'integer'),
    physical(12, 'id', 'integer'),
    physical(12, 'name', 'string'),
    physical(13, 'id', 'integer'),
    physical(13, 'flag', 'boolean'),
    physical(14, 'x', 'integer'),
  ];
  const by = (o: number, n: string) => fields.find((f) => f.objectId === o && f.name === n)!.id;
  return salesModel({
    objects: [
      object(10, 'orders'),
      object(11, 'customers'),
      object(12, 'cities', { schema: 'geo' }),
      object(13, 'vip', {
        kind: 'sql',
        table: null,
        schema: null,
        sql: 'SELECT id, true AS flag FROM customers WHERE vip;',
      }),
      object(14, 'other', { dataSourceId: 2 }),
    ],
    fields,
    relations: [
      {
        id: 1,
        leftObjectId: 10,
        rightObjectId: 11,
        joinType,
        conditions: [{ leftFieldId: by(10, 'customer_id'), rightFieldId: by(11, 'id') }],
      },
      // declared from the city's side: met from customers it turns around
      {
        id: 2,
        leftObjectId: 12,
        rightObjectId: 11,
        joinType: 'right',
        conditions: [{ leftFieldId: by(12, 'id'), rightFieldId: by(11, 'city_id') }],
      },
      {
        id: 3,
        leftObjectId: 11,
        rightObjectId: 13,
        joinType: 'inner',
        conditions: [{ leftFieldId: by(11, 'id'), rightFieldId: by(13, 'id') }],
      },
    ],
  });
}

describe('FROM and JOIN', () => {
  it('joins only the objects needed, along the relations, turning a relation met from its right side', () => {
    expect(
      allDialects(
        chain(),
        request({ rows: [shelf('c', '[cities.name]')], columns: [shelf('t', 'SUM([orders.total])')] }),
      ),
    ).toMatchInlineSnapshot(`
      {
        "clickhouse": "SELECT \`t2\`.\`name\` AS \`__c0\`, sum(toNullable(\`t0\`.\`total\`)) AS \`__c1\` FROM \`public\`.\`orders\` AS \`t0\` ALL LEFT JOIN \`public\`.\`customers\` AS \`t1\` ON (\`t0\`.\`customer_id\` = \`t1\`.\`id\`) ALL LEFT JOIN \`geo\`.\`cities\` AS \`t2\` ON (\`t2\`.\`id\` = \`t1\`.\`city_id\`) GROUP BY \`__c0\` ORDER BY \`__c0\` ASC NULLS FIRST LIMIT 101 SETTINGS join_use_nulls = 1",
        "duckdb": {
          "params": [],
          "sql": "SELECT "t2"."name" AS "__c0", SUM("t0"."total") AS "__c1" FROM "public"."orders" AS "t0" LEFT JOIN "public"."customers" AS "t1" ON ("t0"."customer_id" = "t1"."id") LEFT JOIN "geo"."cities" AS "t2" ON ("t2"."id" = "t1"."city_id") GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
        "mysql": {
          "params": [],
          "sql": "SELECT \`t2\`.\`name\` AS \`__c0\`, SUM(\`t0\`.\`total\`) AS \`__c1\` FROM \`public\`.\`orders\` AS \`t0\` LEFT JOIN \`public\`.\`customers\` AS \`t1\` ON (\`t0\`.\`customer_id\` = \`t1\`.\`id\`) LEFT JOIN \`geo\`.\`cities\` AS \`t2\` ON (\`t2\`.\`id\` = \`t1\`.\`city_id\`) GROUP BY 1 ORDER BY \`__c0\` ASC LIMIT 101",
        },
        "postgresql": {
          "params": [],
          "sql": "SELECT "t2"."name" AS "__c0", SUM("t0"."total") AS "__c1" FROM "public"."orders" AS "t0" LEFT JOIN "public"."customers" AS "t1" ON ("t0"."customer_id" = "t1"."id") LEFT JOIN "geo"."cities" AS "t2" ON ("t2"."id" = "t1"."city_id") GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
      }
    `);
  });

  it('one object needs no join; a query with no reference reads the first object', () => {
    const m = chain();
    expect(
      compileWidgetQuery(m, request({ columns: [shelf('t', 'SUM([customers.id])')] }), dialectIs('postgresql')).sql,
    ).toBe('SELECT SUM("t1"."id") AS "__c0" FROM "public"."customers" AS "t1" LIMIT 101');
    expect(
      compileWidgetQuery(m, request({ type: 'kpi', columns: [shelf('n', 'COUNT()')] }), dialectIs('postgresql')).sql,
    ).toBe('SELECT COUNT(*) AS "__c0" FROM "public"."orders" AS "t0" LIMIT 1');
  });

  it('COUNT() counts rows of the dataset: the first object is always read then', () => {
    const q = compileWidgetQuery(
      chain(),
      request({ rows: [shelf('c', '[cities.name]')], columns: [shelf('n', 'COUNT()')] }),
      dialectIs('postgresql'),
    );
    expect(q.sql).toContain('FROM "public"."orders" AS "t0" LEFT JOIN "public"."customers" AS "t1"');
    const d = compileWidgetQuery(
      chain(),
      request({ rows: [shelf('c', '[cities.name]')], columns: [shelf('n', 'COUNTD([cities.id])')] }),
      dialectIs('postgresql'),
    );
    expect(d.sql).toContain('FROM "geo"."cities" AS "t2" GROUP BY 1');
  });

  it('an object of kind sql is a derived table', () => {
    const q = compileWidgetQuery(
      chain(),
      request({ rows: [shelf('f', '[vip.flag]')], columns: [shelf('t', 'SUM([orders.total])')] }),
      dialectIs('postgresql'),
    );
    expect(q.sql).toContain(
      'INNER JOIN (SELECT id, true AS flag FROM customers WHERE vip) AS "t3" ON ("t1"."id" = "t3"."id")',
    );
    // The owner's SQL is in the text: no connector may treat it as the compiler's own (QueryOptions.compiledText).
    expect(q.compiledText).toBe(false);
    const tablesOnly = { ...chain(), objects: chain().objects.filter((o) => o.kind === 'table') };
    const own = compileWidgetQuery(
      tablesOnly,
      request({ columns: [shelf('t', 'SUM([orders.total])')] }),
      dialectIs('postgresql'),
    );
    expect(own.compiledText).toBe(true);
  });

  it('refuses objects of different sources and objects without a relation path (400)', () => {
    expect(
      failure(() =>
        compileWidgetQuery(
          chain(),
          request({ rows: [shelf('x', '[other.x]')], columns: [shelf('t', 'SUM([orders.total])')] }),
          dialectIs('postgresql'),
        ),
      ),
    ).toEqual({
      status: 400,
      message: 'Объекты «orders», «other» принадлежат разным источникам данных и не могут участвовать в одном запросе',
    });
    const m = { ...chain(), relations: [] };
    expect(
      failure(() =>
        compileWidgetQuery(
          m,
          request({ rows: [shelf('c', '[cities.name]')], columns: [shelf('t', 'SUM([orders.total])')] }),
          dialectIs('postgresql'),
        ),
      ),
    ).toEqual({
      status: 400,
      message: 'Объекты «orders» и «cities» не связаны в датасете: добавьте связь между ними',
    });
  });

  it('MySQL has no FULL JOIN', () => {
    const m = chain();
    m.relations[0] = { ...m.relations[0], joinType: 'full' };
    expect(
      failure(() =>
        compileWidgetQuery(
          m,
          request({ rows: [shelf('c', '[customers.id]')], columns: [shelf('t', 'SUM([orders.total])')] }),
          dialectIs('mysql'),
        ),
      ).message,
    ).toBe('MySQL не поддерживает полное соединение (FULL JOIN)');
  });
});
