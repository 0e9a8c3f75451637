import { describe, expect, it } from 'vitest';
import { compileFieldValuesQuery, compilePreviewQuery } from '../../../../server/query/compile/compile-dataset';
import { dialectIs, failure, salesModel } from './fixtures';

const model = salesModel();
const field = (name: string) => model.fields.find((f) => f.name === name)!;

describe('field values', () => {
  it('distinct values ascending, searched case-insensitively as text, one more than the limit', () => {
    const q = compileFieldValuesQuery(
      model,
      { fieldId: field('product').id, query: 'Ab%_', limit: 50 },
      dialectIs('postgresql'),
    );
    expect(q.sql).toBe(
      'SELECT "t0"."product" AS "__c0" FROM "public"."sales_table" AS "t0" WHERE (LOWER(CAST(("t0"."product") AS text)) LIKE $1) GROUP BY 1 ORDER BY "__c0" ASC NULLS FIRST LIMIT 51',
    );
    expect(q.params).toEqual(['%ab\\%\\_%']);
    expect(q.columns).toEqual([{ key: String(field('product').id), alias: '__c0' }]);
  });

  it("a calculated field uses the dataset's formula; an aggregated one has no values", () => {
    expect(
      failure(() =>
        compileFieldValuesQuery(model, { fieldId: field('Выручка').id, limit: 10 }, dialectIs('postgresql')),
      ).errors,
    ).toEqual({
      fieldId: 'Значения агрегированного поля не перечисляются',
    });
    const m = salesModel({
      fields: [
        ...model.fields,
        { ...field('Выручка'), id: 5000, name: 'Год', formula: 'YEAR([sales.sold_on])', primitiveType: 'integer' },
      ],
    });
    expect(compileFieldValuesQuery(m, { fieldId: 5000, limit: 10 }, dialectIs('mysql')).sql).toBe(
      'SELECT YEAR(`t0`.`sold_on`) AS `__c0` FROM `public`.`sales_table` AS `t0` GROUP BY 1 ORDER BY `__c0` ASC LIMIT 11',
    );
  });

  it('unknown field and limits are 422', () => {
    expect(
      failure(() => compileFieldValuesQuery(model, { fieldId: 1, limit: 10 }, dialectIs('postgresql'))).errors,
    ).toEqual({
      fieldId: 'Поле датасета не найдено (id 1)',
    });
    expect(
      failure(() =>
        compileFieldValuesQuery(model, { fieldId: field('product').id, limit: 1001 }, dialectIs('postgresql')),
      ).status,
    ).toBe(422);
  });
});

describe('dataset preview', () => {
  it('the chosen fields, filtered, joined as needed', () => {
    const q = compilePreviewQuery(
      model,
      {
        fieldIds: [field('product').id, field('name').id],
        filters: [{ sql: '[sales.amount]', op: 'gt', values: [5], value_type: 'number' }],
        limit: 20,
      },
      dialectIs('duckdb'),
    );
    expect(q.sql).toBe(
      'SELECT "t0"."product" AS "__c0", "t1"."name" AS "__c1" FROM "public"."sales_table" AS "t0" LEFT JOIN "regions" AS "t1" ON ("t0"."region_id" = "t1"."id") WHERE ("t0"."amount_rub" > CAST($1 AS INTEGER)) LIMIT 21',
    );
  });

  it('all visible fields by default; a measure-like calculated field groups the rest', () => {
    const q = compilePreviewQuery(model, { limit: 5 }, dialectIs('postgresql'));
    expect(q.columns.map((c) => c.key)).toEqual(model.fields.map((f) => String(f.id)));
    expect(q.sql).toContain('GROUP BY 1, 2, 3, 4, 5, 6, 7, 8');
  });
});
