import { describe, expect, it } from 'vitest';
import { DIALECTS, FUNCTIONS } from '../../../../server/query/expr';
import { SQL_FUNCTIONS } from '../../../../server/query/expr/sql-functions';
import { allDialects, sql } from './helpers';

/** One compact line per dialect: SQL, then the bound values. */
function lines(text: string): string {
  const all = allDialects(text);
  return [
    `postgresql: ${all.postgresql.sql}  ${JSON.stringify(all.postgresql.values)}`,
    `mysql:      ${all.mysql.sql}  ${JSON.stringify(all.mysql.values)}`,
    `clickhouse: ${all.clickhouse}`,
    `duckdb:     ${all.duckdb.sql}  ${JSON.stringify(all.duckdb.values)}`,
  ].join('\n');
}

describe('the whitelist and the compilers match', () => {
  it('has SQL for every whitelisted function and nothing else', () => {
    expect(Object.keys(SQL_FUNCTIONS).sort()).toEqual([...FUNCTIONS.keys()].sort());
  });

  it('compiles every function with its fewest and most arguments in every dialect', () => {
    for (const spec of FUNCTIONS.values()) {
      for (const count of new Set([spec.minArgs, Math.min(spec.maxArgs, spec.minArgs + 2)])) {
        const args = Array.from({ length: count }, (_, i) =>
          i === 0 && spec.units ? `'${spec.units[0]}'` : `[t.a${i}]`,
        );
        for (const dialect of DIALECTS) {
          const out = sql(dialect, `${spec.name}(${args.join(', ')})`).sql;
          for (let i = spec.units ? 1 : 0; i < count; i++) expect(out).toContain(`a${i}`);
        }
      }
    }
  });
});

describe('aggregates', () => {
  it('writes SUM, AVG, MIN, MAX, COUNT', () => {
    expect(lines('SUM([t.a]) + AVG([t.a]) + MIN([t.a]) + MAX([t.a]) + COUNT([t.a]) + COUNT()')).toMatchInlineSnapshot(`
      "postgresql: (((((SUM("t"."a") + AVG("t"."a")) + MIN("t"."a")) + MAX("t"."a")) + COUNT("t"."a")) + COUNT(*))  []
      mysql:      (((((SUM(\`t\`.\`a\`) + AVG(CAST(\`t\`.\`a\` AS DOUBLE))) + MIN(\`t\`.\`a\`)) + MAX(\`t\`.\`a\`)) + COUNT(\`t\`.\`a\`)) + COUNT(*))  []
      clickhouse: (((((sum(toNullable(\`t\`.\`a\`)) + avg(toNullable(\`t\`.\`a\`))) + min(toNullable(\`t\`.\`a\`))) + max(toNullable(\`t\`.\`a\`))) + count(\`t\`.\`a\`)) + count())
      duckdb:     (((((SUM("t"."a") + AVG("t"."a")) + MIN("t"."a")) + MAX("t"."a")) + COUNT("t"."a")) + COUNT(*))  []"
    `);
  });

  it('writes COUNTD as COUNT(DISTINCT) or uniqExact', () => {
    expect(lines('COUNTD([t.a])')).toMatchInlineSnapshot(`
      "postgresql: COUNT(DISTINCT "t"."a")  []
      mysql:      COUNT(DISTINCT \`t\`.\`a\`)  []
      clickhouse: uniqExact(\`t\`.\`a\`)
      duckdb:     COUNT(DISTINCT "t"."a")  []"
    `);
  });
});

describe('math', () => {
  it('writes ROUND through numeric in PostgreSQL', () => {
    expect(lines('ROUND([t.a], 2) + ROUND([t.a]) + ROUND([t.a], [t.n])')).toMatchInlineSnapshot(`
      "postgresql: ((ROUND(CAST("t"."a" AS numeric), CAST($1 AS integer)) + ROUND(CAST("t"."a" AS numeric))) + ROUND(CAST("t"."a" AS numeric), CAST("t"."n" AS integer)))  [2]
      mysql:      ((ROUND(\`t\`.\`a\`, ?) + ROUND(\`t\`.\`a\`)) + ROUND(\`t\`.\`a\`, \`t\`.\`n\`))  [2]
      clickhouse: ((round(\`t\`.\`a\`, 2) + round(\`t\`.\`a\`)) + round(\`t\`.\`a\`, \`t\`.\`n\`))
      duckdb:     ((ROUND("t"."a", CAST($1 AS INTEGER)) + ROUND("t"."a")) + ROUND("t"."a", "t"."n"))  [2]"
    `);
  });

  it('writes ABS, FLOOR, CEILING, POWER, EXP, SIGN', () => {
    expect(lines('ABS([t.a]) + FLOOR([t.a]) + CEILING([t.a]) + POWER([t.a], 2) + EXP([t.a]) + SIGN([t.a])'))
      .toMatchInlineSnapshot(`
      "postgresql: (((((ABS("t"."a") + FLOOR("t"."a")) + CEILING("t"."a")) + POWER("t"."a", CAST($1 AS integer))) + EXP("t"."a")) + SIGN("t"."a"))  [2]
      mysql:      (((((ABS(\`t\`.\`a\`) + FLOOR(\`t\`.\`a\`)) + CEILING(\`t\`.\`a\`)) + POWER(\`t\`.\`a\`, ?)) + EXP(\`t\`.\`a\`)) + SIGN(\`t\`.\`a\`))  [2]
      clickhouse: (((((abs(\`t\`.\`a\`) + floor(\`t\`.\`a\`)) + ceil(\`t\`.\`a\`)) + pow(\`t\`.\`a\`, 2)) + exp(\`t\`.\`a\`)) + multiIf(\`t\`.\`a\` > 0, 1, \`t\`.\`a\` < 0, -1, \`t\`.\`a\` = 0, 0, NULL))
      duckdb:     (((((ABS("t"."a") + FLOOR("t"."a")) + CEILING("t"."a")) + POWER("t"."a", CAST($1 AS INTEGER))) + EXP("t"."a")) + SIGN("t"."a"))  [2]"
    `);
  });

  it('makes SQRT, LN, LOG10 NULL outside their domain', () => {
    expect(lines('SQRT([t.a]) + LN([t.a]) + LOG10([t.a])')).toMatchInlineSnapshot(`
      "postgresql: ((SQRT(CASE WHEN "t"."a" >= 0 THEN "t"."a" ELSE NULL END) + LN(CASE WHEN "t"."a" > 0 THEN "t"."a" ELSE NULL END)) + LOG(CASE WHEN "t"."a" > 0 THEN "t"."a" ELSE NULL END))  []
      mysql:      ((SQRT(CASE WHEN \`t\`.\`a\` >= 0 THEN \`t\`.\`a\` ELSE NULL END) + LN(CASE WHEN \`t\`.\`a\` > 0 THEN \`t\`.\`a\` ELSE NULL END)) + LOG10(CASE WHEN \`t\`.\`a\` > 0 THEN \`t\`.\`a\` ELSE NULL END))  []
      clickhouse: ((sqrt(CASE WHEN \`t\`.\`a\` >= 0 THEN \`t\`.\`a\` ELSE NULL END) + log(CASE WHEN \`t\`.\`a\` > 0 THEN \`t\`.\`a\` ELSE NULL END)) + log10(CASE WHEN \`t\`.\`a\` > 0 THEN \`t\`.\`a\` ELSE NULL END))
      duckdb:     ((SQRT(CASE WHEN "t"."a" >= 0 THEN "t"."a" ELSE NULL END) + LN(CASE WHEN "t"."a" > 0 THEN "t"."a" ELSE NULL END)) + LOG10(CASE WHEN "t"."a" > 0 THEN "t"."a" ELSE NULL END))  []"
    `);
  });

  it('writes DIV as safe division', () => {
    expect(lines('DIV([t.a], [t.b])')).toMatchInlineSnapshot(`
      "postgresql: (CAST("t"."a" AS double precision) / NULLIF("t"."b", 0))  []
      mysql:      (CAST(\`t\`.\`a\` AS DOUBLE) / NULLIF(\`t\`.\`b\`, 0))  []
      clickhouse: (toFloat64(\`t\`.\`a\`) / nullIf(\`t\`.\`b\`, 0))
      duckdb:     (CAST("t"."a" AS DOUBLE) / NULLIF("t"."b", 0))  []"
    `);
  });
});

describe('strings', () => {
  it('writes CONCAT skipping NULLs', () => {
    expect(lines("CONCAT([t.a], '-', [t.b])")).toMatchInlineSnapshot(`
      "postgresql: CONCAT("t"."a", CAST($1 AS text), "t"."b")  ["-"]
      mysql:      CONCAT_WS('', \`t\`.\`a\`, ?, \`t\`.\`b\`)  ["-"]
      clickhouse: concat(ifNull(toString(\`t\`.\`a\`), ''), ifNull(toString('-'), ''), ifNull(toString(\`t\`.\`b\`), ''))
      duckdb:     CONCAT("t"."a", CAST($1 AS VARCHAR), "t"."b")  ["-"]"
    `);
    expect(sql('clickhouse', 'CONCAT([t.a])').sql).toBe("ifNull(toString(`t`.`a`), '')");
  });

  it('writes UPPER, LOWER, TRIM, LTRIM, RTRIM, LEN (Unicode-aware in ClickHouse)', () => {
    expect(lines('CONCAT(UPPER([t.s]), LOWER([t.s]), TRIM([t.s]), LTRIM([t.s]), RTRIM([t.s]), LEN([t.s]))'))
      .toMatchInlineSnapshot(`
      "postgresql: CONCAT(UPPER("t"."s"), LOWER("t"."s"), TRIM("t"."s"), LTRIM("t"."s"), RTRIM("t"."s"), CHAR_LENGTH("t"."s"))  []
      mysql:      CONCAT_WS('', UPPER(\`t\`.\`s\`), LOWER(\`t\`.\`s\`), TRIM(\`t\`.\`s\`), LTRIM(\`t\`.\`s\`), RTRIM(\`t\`.\`s\`), CHAR_LENGTH(\`t\`.\`s\`))  []
      clickhouse: concat(ifNull(toString(upperUTF8(\`t\`.\`s\`)), ''), ifNull(toString(lowerUTF8(\`t\`.\`s\`)), ''), ifNull(toString(replaceRegexpAll(\`t\`.\`s\`, '^ +| +$', '')), ''), ifNull(toString(replaceRegexpOne(\`t\`.\`s\`, '^ +', '')), ''), ifNull(toString(replaceRegexpOne(\`t\`.\`s\`, ' +$', '')), ''), ifNull(toString(lengthUTF8(\`t\`.\`s\`)), ''))
      duckdb:     CONCAT(UPPER("t"."s"), LOWER("t"."s"), TRIM("t"."s"), LTRIM("t"."s"), RTRIM("t"."s"), LENGTH("t"."s"))  []"
    `);
  });

  it('writes LEFT, RIGHT, SUBSTR, REPLACE', () => {
    expect(
      lines(
        "CONCAT(LEFT([t.s], 2), RIGHT([t.s], [t.n]), SUBSTR([t.s], 2), SUBSTR([t.s], 2, 3), REPLACE([t.s], 'a', 'b'))",
      ),
    ).toMatchInlineSnapshot(`
      "postgresql: CONCAT(LEFT("t"."s", CAST($1 AS integer)), RIGHT("t"."s", CAST("t"."n" AS integer)), SUBSTR("t"."s", CAST($2 AS integer)), SUBSTR("t"."s", CAST($3 AS integer), CAST($4 AS integer)), REPLACE("t"."s", CAST($5 AS text), CAST($6 AS text)))  [2,2,2,3,"a","b"]
      mysql:      CONCAT_WS('', LEFT(\`t\`.\`s\`, ?), RIGHT(\`t\`.\`s\`, \`t\`.\`n\`), SUBSTRING(\`t\`.\`s\`, ?), SUBSTRING(\`t\`.\`s\`, ?, ?), REPLACE(\`t\`.\`s\`, ?, ?))  [2,2,2,3,"a","b"]
      clickhouse: concat(ifNull(toString(substringUTF8(\`t\`.\`s\`, 1, 2)), ''), ifNull(toString(reverseUTF8(substringUTF8(reverseUTF8(\`t\`.\`s\`), 1, \`t\`.\`n\`))), ''), ifNull(toString(substringUTF8(\`t\`.\`s\`, 2, 4294967295)), ''), ifNull(toString(substringUTF8(\`t\`.\`s\`, 2, 3)), ''), ifNull(toString(replaceAll(\`t\`.\`s\`, 'a', 'b')), ''))
      duckdb:     CONCAT(LEFT("t"."s", CAST($1 AS INTEGER)), RIGHT("t"."s", "t"."n"), SUBSTRING("t"."s", CAST($2 AS INTEGER)), SUBSTRING("t"."s", CAST($3 AS INTEGER), CAST($4 AS INTEGER)), REPLACE("t"."s", CAST($5 AS VARCHAR), CAST($6 AS VARCHAR)))  [2,2,2,3,"a","b"]"
    `);
  });

  it('writes CONTAINS, STARTSWITH, ENDSWITH without LIKE, so % and _ match themselves', () => {
    expect(lines("CONTAINS([t.s], '50%') AND STARTSWITH([t.s], 'a_') AND ENDSWITH([t.s], 'z')")).toMatchInlineSnapshot(`
      "postgresql: (((STRPOS("t"."s", CAST($1 AS text)) > 0) AND (STRPOS("t"."s", CAST($2 AS text)) = 1)) AND (STRPOS(REVERSE("t"."s"), REVERSE(CAST($3 AS text))) = 1))  ["50%","a_","z"]
      mysql:      (((LOCATE(?, \`t\`.\`s\`) > 0) AND (LOCATE(?, \`t\`.\`s\`) = 1)) AND (LOCATE(REVERSE(?), REVERSE(\`t\`.\`s\`)) = 1))  ["50%","a_","z"]
      clickhouse: (((position(\`t\`.\`s\`, '50%') > 0) AND (position(\`t\`.\`s\`, 'a_') = 1)) AND (position(reverse(\`t\`.\`s\`), reverse('z')) = 1))
      duckdb:     (((strpos("t"."s", CAST($1 AS VARCHAR)) > 0) AND (strpos("t"."s", CAST($2 AS VARCHAR)) = 1)) AND (strpos(REVERSE("t"."s"), REVERSE(CAST($3 AS VARCHAR))) = 1))  ["50%","a_","z"]"
    `);
  });
});

describe('conversions and logic', () => {
  it('writes FLOAT, INT (truncating), STR, DATE', () => {
    expect(lines('CONCAT(FLOAT([t.a]), INT([t.a]), STR([t.a]), DATE([t.a]))')).toMatchInlineSnapshot(`
      "postgresql: CONCAT(CAST("t"."a" AS double precision), CAST(TRUNC(CAST("t"."a" AS numeric)) AS bigint), CAST("t"."a" AS text), CAST("t"."a" AS date))  []
      mysql:      CONCAT_WS('', CAST(\`t\`.\`a\` AS DOUBLE), CAST(TRUNCATE(\`t\`.\`a\`, 0) AS SIGNED), CAST(\`t\`.\`a\` AS CHAR), CAST(\`t\`.\`a\` AS DATE))  []
      clickhouse: concat(ifNull(toString(toFloat64(\`t\`.\`a\`)), ''), ifNull(toString(toInt64(toFloat64(\`t\`.\`a\`))), ''), ifNull(toString(toString(\`t\`.\`a\`)), ''), ifNull(toString(toDate(\`t\`.\`a\`)), ''))
      duckdb:     CONCAT(CAST("t"."a" AS DOUBLE), CAST(trunc(CAST("t"."a" AS DOUBLE)) AS BIGINT), CAST("t"."a" AS VARCHAR), CAST("t"."a" AS DATE))  []"
    `);
  });

  it('writes IF, IFNULL, COALESCE, ZN', () => {
    expect(lines('IF([t.c], IFNULL([t.a], 1), COALESCE([t.a], [t.b], 2)) + ZN([t.a])')).toMatchInlineSnapshot(`
      "postgresql: (CASE WHEN "t"."c" THEN COALESCE("t"."a", CAST($1 AS integer)) ELSE COALESCE("t"."a", "t"."b", CAST($2 AS integer)) END + COALESCE("t"."a", 0))  [1,2]
      mysql:      (CASE WHEN \`t\`.\`c\` THEN COALESCE(\`t\`.\`a\`, ?) ELSE COALESCE(\`t\`.\`a\`, \`t\`.\`b\`, ?) END + COALESCE(\`t\`.\`a\`, 0))  [1,2]
      clickhouse: (CASE WHEN \`t\`.\`c\` THEN ifNull(\`t\`.\`a\`, 1) ELSE coalesce(\`t\`.\`a\`, \`t\`.\`b\`, 2) END + ifNull(\`t\`.\`a\`, 0))
      duckdb:     (CASE WHEN "t"."c" THEN COALESCE("t"."a", CAST($1 AS INTEGER)) ELSE COALESCE("t"."a", "t"."b", CAST($2 AS INTEGER)) END + COALESCE("t"."a", 0))  [1,2]"
    `);
  });
});
