import { describe, expect, it } from 'vitest';
import { parseInitialSql } from '../../../adapters/sources/clickhouse/initial-sql';
import { parseTsvLine } from '../../../adapters/sources/clickhouse/types';
import { leadingKeyword, splitStatements } from '../../../adapters/sources/split-statements';
import {
  dateFromEpochDays,
  normaliseFloat,
  normaliseInteger,
  normaliseTimestamp,
  timestampFromEpochMicros,
} from '../../../adapters/sources/values';

describe('value normalisation', () => {
  it('keeps safe integers as numbers and larger ones as exact strings', () => {
    expect(normaliseInteger('42')).toBe(42);
    expect(normaliseInteger('-9007199254740991')).toBe(-9007199254740991);
    expect(normaliseInteger('9007199254740992')).toBe('9007199254740992');
    expect(normaliseInteger(18446744073709551615n)).toBe('18446744073709551615');
  });

  it('reads decimals and the special float words', () => {
    expect(normaliseFloat('12.50')).toBe(12.5);
    expect(normaliseFloat('inf')).toBe(Infinity);
    expect(normaliseFloat('-Infinity')).toBe(-Infinity);
    expect(normaliseFloat('nan')).toBeNaN();
  });

  it('writes timestamps as ISO 8601 without a zone, instants in UTC', () => {
    expect(normaliseTimestamp('2024-01-02 10:11:12')).toBe('2024-01-02T10:11:12');
    expect(normaliseTimestamp('2024-01-02 10:11:12.120000')).toBe('2024-01-02T10:11:12.12');
    expect(normaliseTimestamp('2024-01-02 01:00:00+03')).toBe('2024-01-01T22:00:00');
    expect(normaliseTimestamp('2024-01-02 01:00:00.5+05:30')).toBe('2024-01-01T19:30:00.5');
    expect(normaliseTimestamp('2024-07-01 03:00:00', 'Europe/Moscow')).toBe('2024-07-01T00:00:00');
    expect(normaliseTimestamp('2024-03-31 03:30:00', 'Europe/Berlin')).toBe('2024-03-31T01:30:00');
    expect(normaliseTimestamp('infinity')).toBe('infinity');
  });

  it('turns epoch days and microseconds into the same forms', () => {
    expect(dateFromEpochDays(19724)).toBe('2024-01-02');
    expect(timestampFromEpochMicros(1704190272500000n)).toBe('2024-01-02T10:11:12.5');
    expect(timestampFromEpochMicros(-1n)).toBe('1969-12-31T23:59:59.999999');
  });
});

describe('sql text helpers', () => {
  it('splits statements outside quotes and comments', () => {
    expect(splitStatements("SET a = 'x;y'; -- c;\nSET b = 2;; /* ; */ SELECT $$;$$")).toEqual([
      "SET a = 'x;y'",
      '-- c;\nSET b = 2',
      '/* ; */ SELECT $$;$$',
    ]);
    expect(splitStatements('  ;  ')).toEqual([]);
  });

  it('finds the first keyword after comments and parentheses', () => {
    expect(leadingKeyword('  -- x\n /* y */ (SELECT 1)')).toBe('select');
    expect(leadingKeyword('WITH a AS (SELECT 1) SELECT * FROM a')).toBe('with');
  });

  it('turns ClickHouse SET statements into request settings', () => {
    expect(
      parseInitialSql(
        "SET max_threads = 2, join_use_nulls = 1; SET load_balancing = 'random'; CREATE TEMPORARY TABLE t (a UInt8)",
      ),
    ).toEqual({
      settings: { max_threads: 2, join_use_nulls: 1, load_balancing: 'random' },
      statements: ['CREATE TEMPORARY TABLE t (a UInt8)'],
    });
  });

  it('undoes TabSeparated escaping', () => {
    expect(parseTsvLine('a\\tb\t\\N\tc\\\\d\t\\n')).toEqual(['a\tb', null, 'c\\d', '\n']);
  });
});
