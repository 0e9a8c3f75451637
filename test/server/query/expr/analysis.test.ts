import { describe, expect, it } from 'vitest';
import { collectReferences, isAggregate, parseExpression } from '../../../../server/query/expr';
import { errorOf } from './helpers';

describe('collectReferences', () => {
  it('lists columns and calculated fields once each, in order of first use', () => {
    const e = parseExpression('IF([Маржа] > 0, [orders.amount] + [orders.amount], [orders.cost]) + [Маржа] + [Бонус]');
    expect(collectReferences(e)).toEqual({
      columns: [
        { table: 'orders', field: 'amount' },
        { table: 'orders', field: 'cost' },
      ],
      calculated: ['Маржа', 'Бонус'],
    });
  });

  it('finds references inside every kind of node', () => {
    const e = parseExpression(
      'CASE WHEN [a.x] IN ([a.y], 1) AND [a.z] BETWEEN [b.lo] AND [b.hi] AND [c.s] LIKE [c.p] AND [d.n] IS NULL THEN -[e.v] ELSE [f] END',
    );
    expect(collectReferences(e).columns.map((c) => `${c.table}.${c.field}`)).toEqual([
      'a.x',
      'a.y',
      'a.z',
      'b.lo',
      'b.hi',
      'c.s',
      'c.p',
      'd.n',
      'e.v',
    ]);
    expect(collectReferences(e).calculated).toEqual(['f']);
  });

  it('does not confuse a column named like a calculated field', () => {
    expect(collectReferences(parseExpression('[t.x] + [t]'))).toEqual({
      columns: [{ table: 't', field: 'x' }],
      calculated: ['t'],
    });
  });
});

describe('isAggregate', () => {
  it('is true when any aggregate call is present, false otherwise', () => {
    expect(isAggregate(parseExpression('SUM([t.a]) / COUNT()'))).toBe(true);
    expect(isAggregate(parseExpression('ROUND(AVG([t.a]), 2)'))).toBe(true);
    expect(isAggregate(parseExpression('COUNTD([t.id]) > 10'))).toBe(true);
    expect(isAggregate(parseExpression('ROUND([t.a], 2) + 1'))).toBe(false);
    expect(isAggregate(parseExpression('UPPER([t.name])'))).toBe(false);
  });

  it('looks through calculated fields when given their definitions', () => {
    const defs: Record<string, string> = {
      ratio: 'SUM([t.a]) / SUM([t.b])',
      plain: '[t.a] * 2',
      wrap: '[ratio] * 100',
    };
    const resolve = (name: string) => parseExpression(defs[name]);
    expect(isAggregate(parseExpression('[wrap]'), resolve)).toBe(true);
    expect(isAggregate(parseExpression('[plain] + 1'), resolve)).toBe(false);
    expect(isAggregate(parseExpression('[wrap]'))).toBe(false);
  });

  it('throws on an aggregate inside an aggregate, also through a calculated field', () => {
    const total = parseExpression('SUM([t.a])');
    expect(errorOf(() => isAggregate(parseExpression('MAX([total])'), () => total)).message).toContain(
      'агрегатная функция SUM не может стоять внутри MAX',
    );
  });

  it('throws on a cycle of calculated fields', () => {
    const defs: Record<string, string> = { a: '[b] + 1', b: '[a] * 2' };
    expect(errorOf(() => isAggregate(parseExpression('[a]'), (n) => parseExpression(defs[n]))).message).toContain(
      'циклическая ссылка между вычисляемыми полями: [a] → [b] → [a]',
    );
  });
});
