import { describe, expect, it } from 'vitest';
import { ExpressionError, parseExpression } from '../../../../server/query/expr';
import { errorOf } from './helpers';

const fail = (text: string) => errorOf(() => parseExpression(text));

describe('syntax errors carry a Russian message and a position', () => {
  it('names an unknown function and points at it', () => {
    expect(fail('1 + FOO(2)')).toEqual({
      message: 'Ошибка в выражении: неизвестная функция FOO (строка 1, позиция 5)',
      position: { line: 1, column: 5 },
    });
  });

  it('is an instance of ExpressionError with the detail apart', () => {
    try {
      parseExpression('nope(1)');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ExpressionError);
      expect((e as ExpressionError).detail).toBe('неизвестная функция NOPE');
    }
  });

  it('reports unbalanced parentheses and brackets', () => {
    expect(fail('(1 + 2')).toEqual({
      message: 'Ошибка в выражении: ожидалось «)», а найдено конец выражения (строка 1, позиция 7)',
      position: { line: 1, column: 7 },
    });
    expect(fail('1 + 2)').position).toEqual({ line: 1, column: 6 });
    expect(fail('1 + 2)').message).toContain('лишний текст после конца выражения: «)»');
    expect(fail('SUM([t.a)').message).toContain('незакрытая квадратная скобка');
    expect(fail('[t.a]]').message).toContain('лишняя закрывающая скобка');
  });

  it('reports unterminated strings and dates', () => {
    expect(fail("'abc").message).toContain('незакрытая строка');
    expect(fail('#2024-01-01').message).toContain('незакрытый литерал даты');
  });

  it('points at the line and column of an error on a later line', () => {
    expect(fail('SUM([t.a])\n  + $').position).toEqual({ line: 2, column: 5 });
  });

  it('rejects an incomplete expression at its end', () => {
    expect(fail('[t.a] +')).toEqual({
      message:
        'Ошибка в выражении: выражение оборвано: ожидалось значение, ссылка на поле или функция (строка 1, позиция 8)',
      position: { line: 1, column: 8 },
    });
  });

  it('rejects wrong arity and explains it', () => {
    expect(fail('LEFT([t.a])').message).toBe(
      'Ошибка в выражении: функция LEFT принимает 2 аргумента, передано 1 (строка 1, позиция 1)',
    );
    expect(fail('ROUND(1, 2, 3)').message).toContain('функция ROUND принимает от 1 до 2 аргументов, передано 3');
    expect(fail('COUNT(1, 2)').message).toContain('функция COUNT принимает от 0 до 1 аргументов, передано 2');
    expect(fail('SUBSTR([t.a])').message).toContain('функция SUBSTR принимает от 2 до 3 аргументов, передано 1');
    expect(fail('TODAY(1)').message).toContain('функция TODAY принимает 0 аргументов, передано 1');
    expect(fail('SUM()').message).toContain('функция SUM принимает 1 аргумент, передано 0');
    expect(fail('CONCAT()').message).toContain('функция CONCAT принимает не меньше 1 аргумента, передано 0');
  });

  it('requires a known unit literal for DATETRUNC, DATEADD and DATEDIFF', () => {
    expect(fail("DATETRUNC('minute', [t.d])").message).toContain("'year', 'quarter', 'month', 'week', 'day', 'hour'");
    expect(fail('DATEADD([t.u], 1, [t.d])').position).toEqual({ line: 1, column: 9 });
    expect(fail("DATEDIFF('decade', [t.a], [t.b])").message).toContain('первый аргумент DATEDIFF');
  });

  it('rejects nested aggregates', () => {
    expect(fail('SUM(AVG([t.a]))')).toEqual({
      message: 'Ошибка в выражении: агрегатная функция AVG не может стоять внутри SUM (строка 1, позиция 5)',
      position: { line: 1, column: 5 },
    });
  });

  it('rejects impossible dates and numbers out of range', () => {
    expect(fail('#2023-02-29#').message).toContain('неверная дата');
    expect(fail('#2024-01-01 24:00:00#').message).toContain('неверная дата');
    expect(fail('#yesterday#').message).toContain('неверная дата');
    expect(fail('99999999999999999999').message).toContain('вне допустимого диапазона');
    expect(fail('1e999').message).toContain('вне допустимого диапазона');
  });

  it('rejects empty references and references without a table or field', () => {
    expect(fail('[]').message).toContain('пустая ссылка');
    expect(fail('[.a]').message).toContain('нет имени таблицы или поля');
    expect(fail('[a.]').message).toContain('нет имени таблицы или поля');
  });

  it('rejects chained comparisons, empty IN and bare words', () => {
    expect(fail('1 < 2 < 3').message).toContain('лишний текст');
    expect(fail('[t.a] IN ()').message).toContain('неожиданный «)»');
    expect(fail('amount * 2').message).toContain('неизвестное имя «amount»');
  });

  it('rejects empty, oversized and too deeply nested text', () => {
    expect(fail('   ').message).toContain('пустое выражение');
    expect(fail('1+'.repeat(15_000) + '1').message).toContain('выражение длиннее');
    expect(fail('('.repeat(300) + '1' + ')'.repeat(300))).toEqual({
      message: 'Ошибка в выражении: выражение слишком сложное: слишком глубокая вложенность (строка 1, позиция 101)',
      position: { line: 1, column: 101 },
    });
    expect(fail('ABS('.repeat(150) + '[t.a]' + ')'.repeat(150)).message).toContain('слишком глубокая вложенность');
    expect(fail('NOT '.repeat(3000) + 'TRUE').message).toContain('слишком глубокая вложенность');
    expect(fail(Array.from({ length: 1500 }, (_, i) => `[t.a${i}]`).join(' + ')).message).toContain(
      'слишком глубокая вложенность',
    );
  });

  it('still parses long flat expressions and keeps working after a failure', () => {
    expect(() => parseExpression(Array.from({ length: 900 }, (_, i) => `[t.a${i}]`).join(' + '))).not.toThrow();
    expect(() => parseExpression('('.repeat(100) + '1' + ')'.repeat(100))).not.toThrow();
    fail('NOT '.repeat(3000) + 'TRUE');
    expect(parseExpression('1').kind).toBe('literal');
  });
});

describe('SQL injection attempts are rejected at parse time', () => {
  const attempts: [string, string][] = [
    ['[a.b]; DROP TABLE x', 'точка с запятой не допускается'],
    ["'x' -- comment", 'комментарии SQL не допускаются: «--»'],
    ['1 --1', 'комментарии SQL не допускаются'],
    ['SUM([a.b]) /* hi */', 'комментарии SQL не допускаются: «/*»'],
    ['[a.b] */', 'комментарии SQL не допускаются: «*/»'],
    ['SUM([a.b]) FROM t', 'лишний текст после конца выражения: «FROM»'],
    ['(SELECT 1)', 'неизвестное имя «SELECT»'],
    ['[t.a] IN (SELECT id FROM users)', 'неизвестное имя «SELECT»'],
    ['1 UNION SELECT password FROM users', 'лишний текст после конца выражения: «UNION»'],
    ['pg_sleep(10)', 'неизвестная функция PG_SLEEP'],
    ['SUM([a.b]) OVER ()', 'лишний текст после конца выражения: «OVER»'],
    ["'a' || 'b'", 'недопустимый символ «|»'],
    ['[t.a]::text', 'недопустимый символ «:»'],
    ['`users`', 'недопустимый символ «`»'],
    ['$1', 'недопустимый символ «$»'],
    ['@@version', 'недопустимый символ «@»'],
    ['\\N', 'недопустимый символ «\\»'],
    ['[a.b]\u0000', 'недопустимый символ'],
    ['CAST([t.a] AS text)', 'ожидалось «)», а найдено «AS»'],
    ['sum ([a.b]) ; select 1', 'точка с запятой не допускается'],
  ];
  for (const [text, detail] of attempts) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      expect(fail(text).message).toContain(detail);
    });
  }
});
