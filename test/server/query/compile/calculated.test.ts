import { describe, expect, it } from 'vitest';
import { compileWidgetQuery } from '../../../../server/query/compile/compile-widget';
import type { CalculatedFieldDef } from '../../../../server/query/compile/types';
import { dialectIs, failure, request, salesModel, shelf } from './fixtures';

const model = salesModel();
const defs = (...list: CalculatedFieldDef[]) => list.map((def, i) => ({ path: `calculatedFields[${i}]`, def }));
const pg = (over: Parameters<typeof request>[0]) => compileWidgetQuery(model, request(over), dialectIs('postgresql'));

describe('calculated fields come from the request (specification, rule 2)', () => {
  it('are compiled inline, also through one another', () => {
    const q = pg({
      rows: [shelf('p', '[sales.product]')],
      columns: [shelf('m', '[Маржа]')],
      calculatedFields: defs(
        { id: '1', name: 'Маржа', alias: 'Маржа', primitive_type: 'float', sql: '[Выручка] - SUM([sales.qty]) * 2' },
        { id: '2', name: 'Выручка', primitive_type: 'float', sql: 'SUM([sales.amount])' },
      ),
    });
    expect(q.sql).toBe(
      'SELECT "t0"."product" AS "__c0", (((SUM("t0"."amount_rub")) - (SUM("t0"."qty") * CAST($1 AS integer)))) AS "__c1" FROM "public"."sales_table" AS "t0" GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 101',
    );
  });

  it("a shelf using a calculated field without its definition is a 400 with the specification's message", () => {
    // The dataset defines «Выручка», but the platform does not take definitions from the dataset.
    expect(failure(() => pg({ columns: [shelf('v', '[Выручка]')] }))).toEqual({
      status: 400,
      message: 'Определение вычисляемого поля не найдено: Выручка',
    });
  });

  it('errors inside a definition are reported at the definition', () => {
    expect(
      failure(() =>
        pg({ columns: [shelf('v', '[x]')], calculatedFields: defs({ name: 'x', sql: 'SUM([sales.product])' }) }),
      ).errors?.['calculatedFields[0].sql'],
    ).toMatch(/функции SUM должен быть типа «число»/);
    expect(
      failure(() => pg({ columns: [shelf('v', '[x]')], calculatedFields: defs({ name: 'x', sql: '1 +' }) })).errors?.[
        'calculatedFields[0].sql'
      ],
    ).toMatch(/^Ошибка в выражении/);
    expect(
      failure(() =>
        pg({
          columns: [shelf('v', '[a]')],
          calculatedFields: defs({ name: 'a', sql: '[b] + 1' }, { name: 'b', sql: '[a] * 2' }),
        }),
      ).errors,
    ).toEqual({
      'calculatedFields[1].sql': 'Ошибка в выражении: циклическая ссылка между вычисляемыми полями: [a] → [b] → [a]',
    });
  });
});
