import { describe, expect, it } from 'vitest';
import type { DatasetParameter } from '../../../../server/query/compile/dataset-model';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import { allDialects, dialectIs, failure, request, salesModel, shelf } from './fixtures';

const param = (
  name: string,
  primitiveType: DatasetParameter['primitiveType'],
  defaultValue: string,
  domain: DatasetParameter['domain'] = { kind: 'any' },
): DatasetParameter => ({
  id: name.length,
  name,
  primitiveType,
  defaultValue,
  domain,
  order: 0,
});

const model = salesModel({
  parameters: [
    param('rate', 'float', '1.5'),
    param('region', 'string', 'Север', { kind: 'list', values: ['Север', 'Юг'] }),
    param('top', 'integer', '10', { kind: 'range', min: '1', max: '100', step: '1' }),
    param('since', 'date', '2024-01-01'),
  ],
});
const shelves = { rows: [shelf('p', '[sales.product]')], columns: [shelf('s', 'SUM([sales.amount] * [rate])')] };
const pg = (parameters: Record<string, string | number | boolean | null>, extra = {}) =>
  compileWidgetQuery(model, request({ ...shelves, parameters, ...extra }), dialectIs('postgresql'));

describe('dataset parameters', () => {
  it('read as [name] and bound as typed values: the default, or the request value once', () => {
    expect(pg({}).params).toEqual([1.5]);
    expect(pg({ rate: '2' }).params).toEqual([2]);
    expect(
      allDialects(
        model,
        request({
          ...shelves,
          parameters: { rate: 0.5 },
          filters: [
            {
              path: 'filters[0]',
              filter: { sql: '[sales.sold_on] >= [since]', op: 'eq', values: [true], value_type: 'boolean' },
            },
          ],
        }),
      ),
    ).toMatchInlineSnapshot(`
      {
        "clickhouse": "SELECT \`t0\`.\`product\` AS \`__c0\`, sum(toNullable((\`t0\`.\`amount_rub\` * (toFloat64(0.5))))) AS \`__c1\` FROM \`public\`.\`sales_table\` AS \`t0\` WHERE ((\`t0\`.\`sold_on\` >= (toDate('2024-01-01'))) = 1) GROUP BY \`__c0\` ORDER BY \`__c0\` ASC NULLS FIRST LIMIT 101",
        "duckdb": {
          "params": [
            0.5,
            "2024-01-01",
          ],
          "sql": "SELECT "t0"."product" AS "__c0", SUM(("t0"."amount_rub" * (CAST($1 AS DOUBLE)))) AS "__c1" FROM "public"."sales_table" AS "t0" WHERE (("t0"."sold_on" >= (CAST($2 AS DATE))) = TRUE) GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
        "mysql": {
          "params": [
            0.5,
            "2024-01-01",
          ],
          "sql": "SELECT \`t0\`.\`product\` AS \`__c0\`, SUM((\`t0\`.\`amount_rub\` * (?))) AS \`__c1\` FROM \`public\`.\`sales_table\` AS \`t0\` WHERE ((\`t0\`.\`sold_on\` >= (CAST(? AS DATE))) = TRUE) GROUP BY 1 ORDER BY \`__c0\` ASC LIMIT 101",
        },
        "postgresql": {
          "params": [
            0.5,
            "2024-01-01",
          ],
          "sql": "SELECT "t0"."product" AS "__c0", SUM(("t0"."amount_rub" * (CAST($1 AS numeric)))) AS "__c1" FROM "public"."sales_table" AS "t0" WHERE (("t0"."sold_on" >= (CAST($2 AS date))) = TRUE) GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 101",
        },
      }
    `);
  });

  it('a parameter is resolved before a calculated field of the same name', () => {
    const q = compileWidgetQuery(
      model,
      request({
        ...shelves,
        calculatedFields: [{ path: 'calculatedFields[0]', def: { name: 'rate', sql: 'no such thing' } }],
      }),
      dialectIs('postgresql'),
    );
    expect(q.params).toEqual([1.5]);
  });

  it('checks type and domain; unknown names are 422', () => {
    expect(failure(() => pg({ rate: 'abc', top: 1000, region: 'Запад', since: '2024-13-01', nope: 1 })).errors).toEqual(
      {
        'parameters.nope': 'Параметр не найден в датасете: nope',
        'parameters.rate': 'Значение параметра rate должно быть числом',
        'parameters.top': 'Значение параметра top должно быть не больше 100',
        'parameters.region': 'Значение параметра region должно быть одним из значений: Север, Юг',
        'parameters.since': 'Значение параметра since должно быть датой (ГГГГ-ММ-ДД)',
      },
    );
    expect(failure(() => pg({ top: 2.5 })).errors).toEqual({
      'parameters.top': 'Значение параметра top должно быть целым числом',
    });
    expect(pg({ region: 'Юг', top: '7' }).params).toEqual([1.5]);
  });

  it('values that look like SQL stay values', () => {
    const q = compileWidgetQuery(
      model,
      request({ rows: [shelf('r', '[region]')], columns: [shelf('n', 'COUNT()')], parameters: {} }),
      dialectIs('clickhouse'),
    );
    expect(q.sql).toContain("('Север') AS `__c0`");
    const m = salesModel({ parameters: [param('p', 'string', '')] });
    const evil = "x'); DROP TABLE sales; --";
    const ch = compileWidgetQuery(
      m,
      request({ rows: [shelf('r', '[p]')], columns: [shelf('n', 'COUNT()')], parameters: { p: evil } }),
      dialectIs('clickhouse'),
    );
    expect(ch.sql).toContain("('x\\'); DROP TABLE sales; --') AS `__c0`");
    const pgq = compileWidgetQuery(
      m,
      request({ rows: [shelf('r', '[p]')], columns: [shelf('n', 'COUNT()')], parameters: { p: evil } }),
      dialectIs('postgresql'),
    );
    expect(pgq.params).toEqual([evil]);
    expect(pgq.sql).not.toContain('DROP');
  });
});
