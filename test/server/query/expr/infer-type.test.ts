import { describe, expect, it } from 'vitest';
import { inferType, parseExpression, type PrimitiveType, type TypeResolver } from '../../../../server/query/expr';
import { errorOf } from './helpers';

const COLUMNS: Record<string, PrimitiveType> = {
  'o.qty': 'integer',
  'o.price': 'float',
  'o.name': 'string',
  'o.day': 'date',
  'o.at': 'datetime',
  'o.paid': 'boolean',
  'o.raw': 'unknown',
};
const CALCULATED: Record<string, PrimitiveType> = { Выручка: 'float', Флаг: 'boolean' };

const resolver: TypeResolver = {
  column: (table, field) => COLUMNS[`${table}.${field}`] ?? 'unknown',
  calculated: (name) => CALCULATED[name] ?? 'unknown',
};

const type = (text: string) => inferType(parseExpression(text), resolver);
const typeError = (text: string) => errorOf(() => type(text)).message;

describe('inferType: result types', () => {
  it.each([
    ['1', 'integer'],
    ['1.5', 'float'],
    ["'a'", 'string'],
    ['TRUE', 'boolean'],
    ['#2024-01-01#', 'date'],
    ['#2024-01-01 10:00:00#', 'datetime'],
    ['NULL', 'unknown'],
    ['[o.qty]', 'integer'],
    ['[Выручка]', 'float'],
    ['[o.qty] + 1', 'integer'],
    ['[o.qty] * [o.price]', 'float'],
    ['[o.qty] / 2', 'float'],
    ['[o.qty] % 3', 'integer'],
    ['-[o.price]', 'float'],
    ['[o.raw] + 1', 'unknown'],
    ['[o.qty] > 1 AND NOT [o.paid]', 'boolean'],
    ["[o.name] LIKE 'a%'", 'boolean'],
    ['[o.day] BETWEEN #2024-01-01# AND #2024-12-31 23:59:59#', 'boolean'],
    ['[o.qty] IN (1, 2.5)', 'boolean'],
    ['[o.name] IS NULL', 'boolean'],
    ['SUM([o.qty])', 'integer'],
    ['SUM([o.price])', 'float'],
    ['AVG([o.qty])', 'float'],
    ['MAX([o.name])', 'string'],
    ['COUNT()', 'integer'],
    ['COUNTD([o.name])', 'integer'],
    ['ROUND([o.price])', 'integer'],
    ['ROUND([o.price], 2)', 'float'],
    ['DIV([o.qty], 2)', 'float'],
    ['SQRT([o.qty])', 'float'],
    ['CONCAT([o.name], [o.qty])', 'string'],
    ['LEN([o.name])', 'integer'],
    ["CONTAINS([o.name], 'x')", 'boolean'],
    ['YEAR([o.day])', 'integer'],
    ["DATETRUNC('month', [o.day])", 'date'],
    ["DATETRUNC('hour', [o.day])", 'datetime'],
    ["DATETRUNC('month', [o.at])", 'datetime'],
    ["DATEADD('day', 3, [o.day])", 'date'],
    ["DATEADD('hour', 3, [o.day])", 'datetime'],
    ["DATEDIFF('day', [o.day], [o.at])", 'integer'],
    ['TODAY()', 'date'],
    ['NOW()', 'datetime'],
    ["FLOAT('1.5')", 'float'],
    ['INT([o.price])', 'integer'],
    ['STR([o.qty])', 'string'],
    ["DATE('2024-01-01')", 'date'],
    ['ZN([o.qty])', 'integer'],
    ['IFNULL([o.qty], 0.5)', 'float'],
    ['COALESCE(NULL, [o.day], [o.at])', 'datetime'],
    ["IF([o.paid], 'yes', NULL)", 'string'],
    ['CASE WHEN [o.qty] > 1 THEN 1 WHEN [Флаг] THEN 2.5 END', 'float'],
    ['CASE WHEN [o.paid] THEN NULL END', 'unknown'],
  ] as [string, PrimitiveType][])('%s -> %s', (text, expected) => {
    expect(type(text)).toBe(expected);
  });
});

describe('inferType: type errors', () => {
  it('rejects arithmetic on strings and points to concatenation', () => {
    expect(typeError("'a' * 2")).toBe(
      'Ошибка в выражении: оператор * ожидает число, а получено «строка» (строка 1, позиция 1)',
    );
    expect(typeError("[o.name] + 'x'")).toContain('строки соединяет функция CONCAT');
  });

  it('rejects date arithmetic with operators', () => {
    expect(typeError('[o.day] + 1')).toContain('используйте DATEADD и DATEDIFF');
  });

  it('rejects % on fractions', () => {
    expect(typeError('[o.price] % 2')).toContain('оператор % ожидает целое число');
  });

  it('rejects aggregates of the wrong type', () => {
    expect(typeError('SUM([o.name])')).toBe(
      'Ошибка в выражении: аргумент 1 функции SUM должен быть типа «число», а получено «строка» (строка 1, позиция 5)',
    );
    expect(typeError('AVG([o.day])')).toContain('функции AVG должен быть типа «число»');
  });

  it('rejects function arguments of the wrong type', () => {
    expect(typeError('LEFT([o.name], 1.5)')).toContain('аргумент 2 функции LEFT должен быть типа «целое число»');
    expect(typeError('YEAR([o.name])')).toContain('функции YEAR должен быть типа «дата»');
    expect(typeError("DATEADD('day', [o.price], [o.day])")).toContain('аргумент 2 функции DATEADD');
    expect(typeError('UPPER([o.qty])')).toContain('функции UPPER должен быть типа «строка»');
    expect(typeError('IF([o.qty], 1, 2)')).toContain('функции IF должен быть типа «логическое значение»');
  });

  it('rejects comparisons of unrelated types', () => {
    expect(typeError("[o.qty] = 'a'")).toContain('нельзя сравнивать «целое число» и «строка»');
    expect(typeError("[o.day] > '2024-01-01'")).toContain('нельзя сравнивать «дата» и «строка»');
    expect(typeError("[o.qty] IN (1, 'a')")).toContain('нельзя сравнивать');
    expect(typeError('[o.qty] BETWEEN 1 AND #2024-01-01#')).toContain('нельзя сравнивать');
  });

  it('rejects logic on non-booleans and LIKE on non-strings', () => {
    expect(typeError('[o.qty] AND TRUE')).toContain('AND ожидает логическое значение');
    expect(typeError('NOT [o.name]')).toContain('NOT ожидает логическое значение');
    expect(typeError("[o.qty] LIKE '1%'")).toContain('LIKE применяется к строке');
    expect(typeError('CASE WHEN [o.qty] THEN 1 END')).toContain('условие WHEN должно быть логическим');
  });

  it('rejects branches of incompatible types', () => {
    expect(typeError("CASE WHEN [o.paid] THEN 1 ELSE 'no' END")).toContain(
      'ветви CASE: несовместимые типы «целое число» и «строка»',
    );
    expect(typeError('IF([o.paid], [o.day], 1)')).toContain('функция IF: несовместимые типы');
    expect(typeError('COALESCE([o.name], 0)')).toContain('функция COALESCE: несовместимые типы');
  });

  it('lets values of unknown type through', () => {
    expect(type('SUM([o.raw]) * [o.raw]')).toBe('float');
    expect(type("[o.raw] = 'a' AND [o.raw]")).toBe('boolean');
  });
});
