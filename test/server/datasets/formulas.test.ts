import { describe, expect, it } from 'vitest';
import {
  analyzeCalculated,
  checkFormula,
  derivedFormula,
  envOfModel,
  type FormulaEnv,
} from '../../../server/datasets/formulas';
import { singular, suggestJoins } from '../../../server/datasets/relation-suggest';
import { parameterValueProblem } from '../../../server/datasets/parameters';
import { emptySavedIds, resolveSchema } from '../../../server/datasets/schema-validation';

const env = (calculated: Record<string, string>): FormulaEnv => ({
  columns: new Map([
    [
      'orders',
      new Map([
        ['amount', 'float'],
        ['created_at', 'datetime'],
        ['city', 'string'],
      ] as const),
    ],
  ]),
  calculated: new Map(Object.entries(calculated).map(([name, formula]) => [name, { name, formula }])),
  parameters: new Map([['Порог', 'float']]),
});

describe('derivedFormula', () => {
  it('applies the function to the reference: unit first for unit functions, extra arguments after the field otherwise', () => {
    expect(derivedFormula('[orders.created_at]', 'year')).toBe('YEAR([orders.created_at])');
    expect(derivedFormula('[orders.created_at]', 'DATETRUNC', ['month'])).toBe(
      "DATETRUNC('month', [orders.created_at])",
    );
    expect(derivedFormula('[orders.created_at]', 'DATEADD', ['day', 7])).toBe("DATEADD('day', 7, [orders.created_at])");
    expect(derivedFormula('[Сумма]', 'ROUND', [2])).toBe('ROUND([Сумма], 2)');
    expect(derivedFormula('[orders.city]', 'LEFT', [3])).toBe('LEFT([orders.city], 3)');
    expect(derivedFormula('[orders.city]', 'REPLACE', ["O'Brien", 'x'])).toBe(
      "REPLACE([orders.city], 'O''Brien', 'x')",
    );
  });
});

describe('analyzeCalculated', () => {
  it('infers types through other calculated fields and parameters', () => {
    const r = analyzeCalculated(
      env({ a: 'SUM([orders.amount])', b: '[a] / 2', c: '[b] > [Порог]', d: 'YEAR([orders.created_at])' }),
    );
    expect([...r].map(([name, x]) => [name, x.ok && x.type, x.ok && x.aggregate])).toEqual([
      ['a', 'float', true],
      ['b', 'float', true],
      ['c', 'boolean', true],
      ['d', 'integer', false],
    ]);
  });

  it('gives every field on a cycle the cycle error and leaves fields that only use it alone', () => {
    const r = analyzeCalculated(env({ user: '[x] + 1', x: '[y] + 1', y: '[z] + 1', z: '[x] * 2' }));
    expect(r.get('user')).toMatchObject({ ok: true, type: 'unknown' });
    for (const name of ['x', 'y', 'z']) {
      const res = r.get(name)!;
      expect(res.ok, name).toBe(false);
      if (!res.ok) expect(res.error.detail).toMatch(/^циклическая ссылка между вычисляемыми полями: /);
    }
  });

  it('does not report a field again for the error of a field it uses', () => {
    const r = analyzeCalculated(env({ broken: '[orders.nope]', user: '[broken] + 1' }));
    expect(r.get('broken')!.ok).toBe(false);
    expect(r.get('user')).toMatchObject({ ok: true });
  });
});

describe('checkFormula', () => {
  it('checks one formula against the saved fields; with a field name it replaces that field first', () => {
    const e = env({ a: 'SUM([orders.amount])', b: '[a] * 2' });
    expect(checkFormula('[b] + 1', e)).toMatchObject({ ok: true, type: 'float', aggregate: true });
    const cycle = checkFormula('[b] + 1', e, 'a');
    expect(cycle.ok).toBe(false);
    if (!cycle.ok)
      expect(cycle.error.message).toBe(
        'Ошибка в выражении: циклическая ссылка между вычисляемыми полями: [a] → [b] → [a] (строка 1, позиция 1)',
      );
    const unknown = checkFormula('[nope]', e);
    expect(!unknown.ok && unknown.error.message).toBe(
      'Ошибка в выражении: поле [nope] не найдено в датасете (строка 1, позиция 1)',
    );
  });

  it('builds its environment from a saved model', () => {
    const e = envOfModel({
      objects: [{ id: 1, dataSourceId: 1, name: 'o', kind: 'table', schema: null, table: 'o', sql: null }],
      fields: [
        {
          id: 1,
          objectId: 1,
          name: 'n',
          title: 'n',
          kind: 'physical',
          column: 'n',
          formula: null,
          derivation: null,
          primitiveType: 'integer',
          aggregation: 'none',
          hidden: false,
          description: '',
          sortByFieldId: null,
        },
        {
          id: 2,
          objectId: null,
          name: 'm',
          title: 'm',
          kind: 'calculated',
          column: null,
          formula: 'MAX([o.n])',
          derivation: null,
          primitiveType: 'integer',
          aggregation: 'none',
          hidden: false,
          description: '',
          sortByFieldId: null,
        },
      ],
      parameters: [
        {
          id: 1,
          name: 'p',
          primitiveType: 'float',
          declaredType: 'number',
          defaultValue: '1',
          domain: { kind: 'any' },
          order: 0,
        },
      ],
    });
    expect(checkFormula('[m] + [p]', e)).toMatchObject({ ok: true, type: 'float' });
  });
});

describe('resolveSchema', () => {
  it('is pure: reports every problem at once and resolves nothing on failure', () => {
    const r = resolveSchema(
      {
        objects: [{ id: 5, data_source_id: 1, table: 't' }],
        fields: [
          { id: -1, object_id: 5, column: 'a' },
          { id: -1, name: 'x', formula: '1' },
        ],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      emptySavedIds(),
      [1],
    );
    expect(r).toEqual({
      ok: false,
      errors: { 'objects[0].id': 'Объект датасета не найден (id 5)', 'fields[1].id': 'Повторяющийся id -1' },
    });
  });
});

describe('parameterValueProblem', () => {
  it('reads parameter values as their declared type', () => {
    expect(parameterValueProblem('number', '1.5e3')).toBeNull();
    expect(parameterValueProblem('number', '1,5')).toBe('must be a number');
    expect(parameterValueProblem('integer', '-7')).toBeNull();
    expect(parameterValueProblem('integer', '7.0')).toBe('must be an integer');
    expect(parameterValueProblem('boolean', 'true')).toBeNull();
    expect(parameterValueProblem('date', '2024-02-29')).toBeNull();
    expect(parameterValueProblem('date', '2023-02-29')).toBe('must be a date (YYYY-MM-DD)');
    expect(parameterValueProblem('datetime', '2024-02-29 10:00:00')).toBeNull();
    expect(parameterValueProblem('string', 'anything')).toBeNull();
  });
});

describe('relation suggestions', () => {
  it('singularizes table names', () => {
    expect(['customers', 'categories', 'boxes', 'addresses', 'status', 'dim_stores', 'person'].map(singular)).toEqual([
      'customer',
      'category',
      'box',
      'address',
      'status',
      'store',
      'person',
    ]);
  });

  it('matches <table>_id to id and shared key columns, case-insensitively', () => {
    const joins = suggestJoins([
      { id: 1, name: 'Orders', table: 'public.orders', columns: ['ID', 'Customer_ID', 'region_code'] },
      { id: 2, name: 'clients', table: 'customers', columns: ['id', 'name'] },
      { id: 3, name: 'regions', table: 'regions', columns: ['region_code', 'title'] },
      { id: 4, name: 'notes', table: 'notes', columns: ['text', 'name'] },
    ]);
    expect(joins).toEqual([
      {
        leftObjectId: 1,
        rightObjectId: 2,
        conditions: [{ leftColumn: 'Customer_ID', rightColumn: 'id' }],
        reason: 'key_name',
      },
      {
        leftObjectId: 1,
        rightObjectId: 3,
        conditions: [{ leftColumn: 'region_code', rightColumn: 'region_code' }],
        reason: 'shared_key',
      },
    ]);
  });
});

describe('long chains of calculated fields', () => {
  it('are refused past the limit, in linear time and without exhausting the stack', () => {
    const chain: Record<string, string> = { f0: 'SUM([orders.amount])' };
    for (let i = 1; i <= 5000; i++) chain[`f${i}`] = `[f${i - 1}] + [f${i - 1}]`;
    const started = Date.now();
    const forward = analyzeCalculated(env(chain));
    const backward = analyzeCalculated({ ...env(chain), calculated: new Map([...env(chain).calculated].reverse()) });
    expect(Date.now() - started).toBeLessThan(5000);
    for (const r of [forward, backward]) {
      expect(r.get('f15')).toMatchObject({ ok: true, type: 'float', aggregate: true });
      // Each link doubles the substituted formula: f16 would be 196 607 nodes.
      const big = r.get('f16')!;
      expect(!big.ok && big.error.message).toBe(
        'Ошибка в выражении: выражение с подставленными вычисляемыми полями слишком велико',
      );
      // f50 ends a chain of 51 fields; every field above it too.
      for (const name of ['f50', 'f51', 'f5000']) {
        const cut = r.get(name)!;
        expect(!cut.ok && cut.error.message, name).toBe(
          'Ошибка в выражении: цепочка ссылок между вычисляемыми полями длиннее 50',
        );
      }
    }
  });
});
