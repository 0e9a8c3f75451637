import { describe, expect, it } from 'vitest';
import { createParamSink, escapeLiteral, quoteIdentifier } from '../../../../server/query/expr';
import { errorOf } from './helpers';

describe('quoteIdentifier', () => {
  it('double-quotes for PostgreSQL and DuckDB, doubling quotes inside', () => {
    expect(quoteIdentifier('postgresql', 'Сумма "брутто"')).toBe('"Сумма ""брутто"""');
    expect(quoteIdentifier('duckdb', 'a.b')).toBe('"a.b"');
  });

  it('backquotes for MySQL, doubling backquotes; a backslash is plain there', () => {
    expect(quoteIdentifier('mysql', 'we`ird\\')).toBe('`we``ird\\`');
  });

  it('backquotes for ClickHouse with backslash escapes, since ClickHouse reads them in identifiers', () => {
    expect(quoteIdentifier('clickhouse', 'a`b')).toBe('`a\\`b`');
    // Without escaping the backslash, `x\` would swallow the closing quote.
    expect(quoteIdentifier('clickhouse', 'x\\')).toBe('`x\\\\`');
  });

  it('rejects NUL and empty names', () => {
    expect(errorOf(() => quoteIdentifier('postgresql', 'a\0b')).message).toContain('нулевой символ');
    expect(errorOf(() => quoteIdentifier('mysql', '')).message).toContain('пустое имя');
  });
});

describe('escapeLiteral', () => {
  it('escapes backslash and quote for ClickHouse, and control characters', () => {
    expect(escapeLiteral('clickhouse', "it's a \\ test\n")).toBe("'it\\'s a \\\\ test\\n'");
    expect(escapeLiteral('clickhouse', "\\'; DROP TABLE t; --")).toBe("'\\\\\\'; DROP TABLE t; --'");
    expect(escapeLiteral('clickhouse', 'a\0b\tc\r')).toBe("'a\\0b\\tc\\r'");
  });

  it('writes numbers from their value and parenthesizes negatives so no -- can form', () => {
    expect(escapeLiteral('clickhouse', 42)).toBe('42');
    expect(escapeLiteral('clickhouse', 0.1)).toBe('0.1');
    expect(escapeLiteral('clickhouse', -5)).toBe('(-5)');
    expect(escapeLiteral('clickhouse', -0)).toBe('0');
    expect(escapeLiteral('clickhouse', 1e21)).toBe('1e+21');
  });

  it('rejects non-finite numbers', () => {
    for (const n of [NaN, Infinity, -Infinity]) {
      expect(errorOf(() => escapeLiteral('clickhouse', n)).message).toContain('не может быть значением запроса');
    }
  });

  it('writes booleans, NULL and dates', () => {
    expect(escapeLiteral('clickhouse', true)).toBe('1');
    expect(escapeLiteral('clickhouse', false)).toBe('0');
    expect(escapeLiteral('clickhouse', null)).toBe('NULL');
    expect(escapeLiteral('clickhouse', new Date('2024-01-31T10:00:00Z'))).toBe(
      "toDateTime('2024-01-31 10:00:00', 'UTC')",
    );
    expect(escapeLiteral('postgresql', true)).toBe('TRUE');
  });

  it('quotes strings safely for the other dialects too', () => {
    expect(escapeLiteral('postgresql', "a'b\\")).toBe("E'a''b\\\\'");
    expect(escapeLiteral('mysql', "a'b\\")).toBe("'a''b\\\\'");
    expect(escapeLiteral('duckdb', "a'b\\")).toBe("'a''b\\'");
  });
});

describe('createParamSink', () => {
  it('numbers PostgreSQL and DuckDB placeholders and keeps the values', () => {
    const sink = createParamSink('postgresql');
    expect([sink.add('a'), sink.add(2), sink.add(null)]).toEqual(['$1', '$2', '$3']);
    expect(sink.values).toEqual(['a', 2, null]);
    const duck = createParamSink('duckdb');
    expect(duck.add(true)).toBe('$1');
  });

  it('uses ? for MySQL', () => {
    const sink = createParamSink('mysql');
    expect([sink.add('a'), sink.add(1.5)]).toEqual(['?', '?']);
    expect(sink.values).toEqual(['a', 1.5]);
  });

  it('inlines escaped values for ClickHouse and keeps values empty', () => {
    const sink = createParamSink('clickhouse');
    expect(sink.add("x'")).toBe("'x\\''");
    expect(sink.add(-1)).toBe('(-1)');
    expect(sink.values).toEqual([]);
  });

  it('rejects values that are not scalars or are not finite', () => {
    const sink = createParamSink('postgresql');
    expect(errorOf(() => sink.add({ a: 1 })).message).toContain('значение типа object');
    expect(errorOf(() => sink.add(NaN)).message).toContain('не может быть значением запроса');
    expect(errorOf(() => sink.add(undefined)).message).toContain('значение типа undefined');
    expect(sink.values).toEqual([]);
  });
});
