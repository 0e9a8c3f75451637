import { describe, expect, it } from 'vitest';
import { parseExpression } from '../../../../server/query/expr';
import { ast } from './helpers';

const col = (table: string, field: string) => ({ kind: 'column_ref', table, field });
const int = (value: number) => ({ kind: 'literal', type: 'integer', value });

describe('references', () => {
  it('splits [table.field] at the first dot; names may hold spaces, Cyrillic and further dots', () => {
    expect(ast('[orders.amount]')).toEqual(col('orders', 'amount'));
    expect(ast('[Заказы клиентов.Сумма заказа]')).toEqual(col('Заказы клиентов', 'Сумма заказа'));
    expect(ast('[events.params.key]')).toEqual(col('events', 'params.key'));
  });

  it('reads [name] without a dot as a calculated field', () => {
    expect(ast('[Прибыль]')).toEqual({ kind: 'calc_ref', name: 'Прибыль' });
  });

  it('reads ]] inside brackets as ]', () => {
    expect(ast('[t.a]]b]')).toEqual(col('t', 'a]b'));
    expect(ast('[x]]]')).toEqual({ kind: 'calc_ref', name: 'x]' });
  });

  it('keeps names exactly, spaces included', () => {
    expect(ast('[ t . f ]')).toEqual(col(' t ', ' f '));
  });
});

describe('literals', () => {
  it('reads integers, decimals and exponents', () => {
    expect(ast('42')).toEqual(int(42));
    expect(ast('3.25')).toEqual({ kind: 'literal', type: 'float', value: 3.25 });
    expect(ast('.5')).toEqual({ kind: 'literal', type: 'float', value: 0.5 });
    expect(ast('1e3')).toEqual({ kind: 'literal', type: 'float', value: 1000 });
    expect(ast('2.5E-1')).toEqual({ kind: 'literal', type: 'float', value: 0.25 });
  });

  it('folds a minus before a number into the literal', () => {
    expect(ast('-7')).toEqual(int(-7));
    expect(ast('- 2.5')).toEqual({ kind: 'literal', type: 'float', value: -2.5 });
  });

  it('reads strings in single or double quotes with doubled-quote escaping', () => {
    expect(ast("'it''s'")).toEqual({ kind: 'literal', type: 'string', value: "it's" });
    expect(ast('"say ""hi"""')).toEqual({ kind: 'literal', type: 'string', value: 'say "hi"' });
    expect(ast("''")).toEqual({ kind: 'literal', type: 'string', value: '' });
    expect(ast("'a\nb'")).toEqual({ kind: 'literal', type: 'string', value: 'a\nb' });
  });

  it('keeps backslashes in strings as plain characters', () => {
    expect(ast("'a\\'")).toEqual({ kind: 'literal', type: 'string', value: 'a\\' });
  });

  it('reads TRUE, FALSE and NULL in any case', () => {
    expect(ast('true')).toEqual({ kind: 'literal', type: 'boolean', value: true });
    expect(ast('False')).toEqual({ kind: 'literal', type: 'boolean', value: false });
    expect(ast('null')).toEqual({ kind: 'literal', type: 'null', value: null });
  });

  it('reads date and datetime literals', () => {
    expect(ast('#2024-01-31#')).toEqual({ kind: 'literal', type: 'date', value: '2024-01-31' });
    expect(ast('#2024-01-31 10:00:00#')).toEqual({ kind: 'literal', type: 'datetime', value: '2024-01-31 10:00:00' });
    expect(ast('#2024-02-29T23:59#')).toEqual({ kind: 'literal', type: 'datetime', value: '2024-02-29 23:59:00' });
  });
});

describe('operator precedence', () => {
  it('binds * / % tighter than + -, left to right', () => {
    expect(ast('1 + 2 * 3')).toEqual({
      kind: 'binary',
      op: '+',
      left: int(1),
      right: { kind: 'binary', op: '*', left: int(2), right: int(3) },
    });
    expect(ast('8 - 4 - 2')).toEqual({
      kind: 'binary',
      op: '-',
      left: { kind: 'binary', op: '-', left: int(8), right: int(4) },
      right: int(2),
    });
    expect(ast('7 % 4 / 2')).toEqual({
      kind: 'binary',
      op: '/',
      left: { kind: 'binary', op: '%', left: int(7), right: int(4) },
      right: int(2),
    });
  });

  it('binds unary minus tighter than *', () => {
    expect(ast('-[t.a] * 2')).toEqual({
      kind: 'binary',
      op: '*',
      left: { kind: 'unary', op: '-', operand: col('t', 'a') },
      right: int(2),
    });
  });

  it('parentheses override precedence', () => {
    expect(ast('(1 + 2) * 3')).toEqual({
      kind: 'binary',
      op: '*',
      left: { kind: 'binary', op: '+', left: int(1), right: int(2) },
      right: int(3),
    });
  });

  it('orders comparison > NOT > AND > OR', () => {
    expect(ast('NOT [t.a] = 1 AND [t.b] > 2 OR [t.c] < 3')).toEqual({
      kind: 'binary',
      op: 'or',
      left: {
        kind: 'binary',
        op: 'and',
        left: { kind: 'unary', op: 'not', operand: { kind: 'binary', op: '=', left: col('t', 'a'), right: int(1) } },
        right: { kind: 'binary', op: '>', left: col('t', 'b'), right: int(2) },
      },
      right: { kind: 'binary', op: '<', left: col('t', 'c'), right: int(3) },
    });
  });

  it('normalizes <> to != and compares arithmetic results', () => {
    expect(ast('[t.a] + 1 <> [t.b] * 2')).toEqual({
      kind: 'binary',
      op: '!=',
      left: { kind: 'binary', op: '+', left: col('t', 'a'), right: int(1) },
      right: { kind: 'binary', op: '*', left: col('t', 'b'), right: int(2) },
    });
  });

  it('keeps the AND of BETWEEN apart from logical AND', () => {
    expect(ast('[t.a] BETWEEN 1 AND 5 AND [t.b]')).toEqual({
      kind: 'binary',
      op: 'and',
      left: { kind: 'between', expr: col('t', 'a'), low: int(1), high: int(5), negated: false },
      right: col('t', 'b'),
    });
  });
});

describe('predicates', () => {
  it('reads IS [NOT] NULL, [NOT] IN, [NOT] LIKE and [NOT] BETWEEN', () => {
    expect(ast('[t.a] is not null')).toEqual({ kind: 'is_null', expr: col('t', 'a'), negated: true });
    expect(ast('[t.a] IS NULL')).toEqual({ kind: 'is_null', expr: col('t', 'a'), negated: false });
    expect(ast('[t.a] NOT IN (1, 2)')).toEqual({
      kind: 'in',
      expr: col('t', 'a'),
      list: [int(1), int(2)],
      negated: true,
    });
    expect(ast("[t.a] in ('x')")).toEqual({
      kind: 'in',
      expr: col('t', 'a'),
      list: [{ kind: 'literal', type: 'string', value: 'x' }],
      negated: false,
    });
    expect(ast("[t.a] NOT LIKE 'a%'")).toEqual({
      kind: 'like',
      expr: col('t', 'a'),
      pattern: { kind: 'literal', type: 'string', value: 'a%' },
      negated: true,
    });
    expect(ast('[t.a] NOT BETWEEN 1 AND 2')).toEqual({
      kind: 'between',
      expr: col('t', 'a'),
      low: int(1),
      high: int(2),
      negated: true,
    });
  });
});

describe('CASE and functions', () => {
  it('reads searched CASE with and without ELSE', () => {
    expect(ast("CASE WHEN [t.a] > 1 THEN 'big' WHEN [t.a] > 0 THEN 'small' END")).toEqual({
      kind: 'case',
      branches: [
        {
          when: { kind: 'binary', op: '>', left: col('t', 'a'), right: int(1) },
          then: { kind: 'literal', type: 'string', value: 'big' },
        },
        {
          when: { kind: 'binary', op: '>', left: col('t', 'a'), right: int(0) },
          then: { kind: 'literal', type: 'string', value: 'small' },
        },
      ],
      else: null,
    });
  });

  it('rewrites simple CASE into equality conditions', () => {
    expect(ast("case [t.a] when 1 then 'one' else 'other' end")).toEqual({
      kind: 'case',
      branches: [
        {
          when: { kind: 'binary', op: '=', left: col('t', 'a'), right: int(1) },
          then: { kind: 'literal', type: 'string', value: 'one' },
        },
      ],
      else: { kind: 'literal', type: 'string', value: 'other' },
    });
  });

  it('upper-cases function names and unit arguments are lower-cased', () => {
    expect(ast('sum([t.a])')).toEqual({ kind: 'call', name: 'SUM', args: [col('t', 'a')] });
    expect(ast("DateTrunc('Month', [t.d])")).toEqual({
      kind: 'call',
      name: 'DATETRUNC',
      args: [{ kind: 'literal', type: 'string', value: 'month' }, col('t', 'd')],
    });
  });

  it('reads COUNT() with no arguments and IF as a function', () => {
    expect(ast('COUNT()')).toEqual({ kind: 'call', name: 'COUNT', args: [] });
    expect(ast('IF([t.a] > 0, 1, 0)')).toEqual({
      kind: 'call',
      name: 'IF',
      args: [{ kind: 'binary', op: '>', left: col('t', 'a'), right: int(0) }, int(1), int(0)],
    });
  });

  it('records 1-based positions of nodes', () => {
    const e = parseExpression('1 +\n  SUM([t.a])');
    expect(e.kind === 'binary' && e.right.pos).toEqual({ line: 2, column: 3 });
  });
});
