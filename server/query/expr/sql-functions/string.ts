import type { Dialect } from '../dialect';
import type { Expr } from '../ast';
import { pick, plain, type Arg, type SqlFunction } from './call-args';

/** PostgreSQL's LEFT/RIGHT/SUBSTR take integer only, and a bigint column does not convert on its own. */
const pgInt = (raw: Expr, a: Arg): Arg => (raw.kind === 'literal' ? a : () => `CAST(${a()} AS integer)`);

/** A text position (1-based, 0 when absent) of `needle` in `haystack`; written per dialect's argument order. */
function position(dialect: Dialect, haystack: Arg, needle: Arg): string {
  return pick(dialect, {
    postgresql: () => `STRPOS(${haystack()}, ${needle()})`,
    mysql: () => `LOCATE(${needle()}, ${haystack()})`,
    clickhouse: () => `position(${haystack()}, ${needle()})`,
    duckdb: () => `strpos(${haystack()}, ${needle()})`,
  });
}

const reversed =
  (dialect: Dialect, a: Arg): Arg =>
  () =>
    `${dialect === 'clickhouse' ? 'reverse' : 'REVERSE'}(${a()})`;

/** ClickHouse 18.16 has no trim functions; these regular expressions remove spaces only, as SQL TRIM does. */
function trim(name: string, regexp: string, all: boolean): SqlFunction {
  return ({ dialect, args: [s] }) =>
    dialect === 'clickhouse'
      ? `${all ? 'replaceRegexpAll' : 'replaceRegexpOne'}(${s()}, '${regexp}', '')`
      : `${name}(${s()})`;
}

/**
 * String functions count characters, not bytes (lengthUTF8/substringUTF8 in ClickHouse), and upper/lower case work
 * on Cyrillic (upperUTF8). ClickHouse 18.16 wants the positions and lengths of LEFT/RIGHT/SUBSTR to be constants.
 * CONTAINS/STARTSWITH/ENDSWITH use positions instead of LIKE, so `%` and `_` in the searched text are plain
 * characters. Comparison follows the column's collation (case-insensitive in MySQL).
 */
export const STRING_FUNCTIONS: Record<string, SqlFunction> = {
  // NULL arguments are skipped (PostgreSQL and DuckDB CONCAT already do this; MySQL CONCAT would return NULL).
  CONCAT: ({ dialect, args }) =>
    pick(dialect, {
      postgresql: () => `CONCAT(${args.map((a) => a()).join(', ')})`,
      mysql: () => `CONCAT_WS('', ${args.map((a) => a()).join(', ')})`,
      clickhouse: () => {
        const parts = args.map((a) => `ifNull(toString(${a()}), '')`);
        return parts.length === 1 ? parts[0] : `concat(${parts.join(', ')})`;
      },
      duckdb: () => `CONCAT(${args.map((a) => a()).join(', ')})`,
    }),
  UPPER: plain('UPPER', 'upperUTF8'),
  LOWER: plain('LOWER', 'lowerUTF8'),
  TRIM: trim('TRIM', '^ +| +$', true),
  LTRIM: trim('LTRIM', '^ +', false),
  RTRIM: trim('RTRIM', ' +$', false),
  LEN: ({ dialect, args: [s] }) =>
    pick(dialect, {
      postgresql: () => `CHAR_LENGTH(${s()})`,
      mysql: () => `CHAR_LENGTH(${s()})`,
      clickhouse: () => `lengthUTF8(${s()})`,
      duckdb: () => `LENGTH(${s()})`,
    }),
  LEFT: ({ dialect, args: [s, n], raw }) =>
    pick(dialect, {
      postgresql: () => `LEFT(${s()}, ${pgInt(raw[1], n)()})`,
      mysql: () => `LEFT(${s()}, ${n()})`,
      clickhouse: () => `substringUTF8(${s()}, 1, ${n()})`,
      duckdb: () => `LEFT(${s()}, ${n()})`,
    }),
  RIGHT: ({ dialect, args: [s, n], raw }) =>
    pick(dialect, {
      postgresql: () => `RIGHT(${s()}, ${pgInt(raw[1], n)()})`,
      mysql: () => `RIGHT(${s()}, ${n()})`,
      // ClickHouse 18.16's substringUTF8 takes constant positions only: take the first n of the reversed text.
      clickhouse: () => `reverseUTF8(substringUTF8(reverseUTF8(${s()}), 1, ${n()}))`,
      duckdb: () => `RIGHT(${s()}, ${n()})`,
    }),
  SUBSTR: ({ dialect, args: [s, start, len], raw }) =>
    pick(dialect, {
      postgresql: () =>
        len
          ? `SUBSTR(${s()}, ${pgInt(raw[1], start)()}, ${pgInt(raw[2], len)()})`
          : `SUBSTR(${s()}, ${pgInt(raw[1], start)()})`,
      mysql: () => (len ? `SUBSTRING(${s()}, ${start()}, ${len()})` : `SUBSTRING(${s()}, ${start()})`),
      // 18.16 needs all three arguments, constant: "to the end" is the largest length it accepts.
      clickhouse: () => `substringUTF8(${s()}, ${start()}, ${len ? len() : '4294967295'})`,
      duckdb: () => (len ? `SUBSTRING(${s()}, ${start()}, ${len()})` : `SUBSTRING(${s()}, ${start()})`),
    }),
  REPLACE: plain('REPLACE', 'replaceAll'),
  CONTAINS: ({ dialect, args: [s, sub] }) => `(${position(dialect, s, sub)} > 0)`,
  STARTSWITH: ({ dialect, args: [s, prefix] }) => `(${position(dialect, s, prefix)} = 1)`,
  // The suffix of a text is the prefix of the reversed text; this needs no length arithmetic and no endsWith().
  ENDSWITH: ({ dialect, args: [s, suffix] }) =>
    `(${position(dialect, reversed(dialect, s), reversed(dialect, suffix))} = 1)`,
};
