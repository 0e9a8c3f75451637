import { describe, expect, it } from 'vitest';
import { allDialects } from './helpers';

function lines(text: string): string {
  const all = allDialects(text);
  return [
    `postgresql: ${all.postgresql.sql}  ${JSON.stringify(all.postgresql.values)}`,
    `mysql:      ${all.mysql.sql}  ${JSON.stringify(all.mysql.values)}`,
    `clickhouse: ${all.clickhouse}`,
    `duckdb:     ${all.duckdb.sql}  ${JSON.stringify(all.duckdb.values)}`,
  ].join('\n');
}

describe('date parts', () => {
  it('writes YEAR, QUARTER, MONTH, WEEK (ISO), DAY, HOUR, MINUTE', () => {
    expect(
      lines('YEAR([t.d]) + QUARTER([t.d]) + MONTH([t.d]) + WEEK([t.d]) + DAY([t.d]) + HOUR([t.d]) + MINUTE([t.d])'),
    ).toMatchInlineSnapshot(`
      "postgresql: ((((((CAST(EXTRACT(YEAR FROM "t"."d") AS integer) + CAST(EXTRACT(QUARTER FROM "t"."d") AS integer)) + CAST(EXTRACT(MONTH FROM "t"."d") AS integer)) + CAST(EXTRACT(WEEK FROM "t"."d") AS integer)) + CAST(EXTRACT(DAY FROM "t"."d") AS integer)) + CAST(EXTRACT(HOUR FROM "t"."d") AS integer)) + CAST(EXTRACT(MINUTE FROM "t"."d") AS integer))  []
      mysql:      ((((((YEAR(\`t\`.\`d\`) + QUARTER(\`t\`.\`d\`)) + MONTH(\`t\`.\`d\`)) + WEEK(\`t\`.\`d\`, 3)) + DAYOFMONTH(\`t\`.\`d\`)) + HOUR(\`t\`.\`d\`)) + MINUTE(\`t\`.\`d\`))  []
      clickhouse: ((((((toYear(\`t\`.\`d\`) + toQuarter(\`t\`.\`d\`)) + toMonth(\`t\`.\`d\`)) + toISOWeek(\`t\`.\`d\`)) + toDayOfMonth(\`t\`.\`d\`)) + toHour(\`t\`.\`d\`)) + toMinute(\`t\`.\`d\`))
      duckdb:     ((((((year("t"."d") + quarter("t"."d")) + month("t"."d")) + week("t"."d")) + day("t"."d")) + hour("t"."d")) + minute("t"."d"))  []"
    `);
  });
});

describe('DATETRUNC', () => {
  for (const unit of ['year', 'quarter', 'month', 'week', 'day', 'hour']) {
    it(`truncates to ${unit}`, () => {
      expect(lines(`DATETRUNC('${unit}', [t.d])`)).toMatchSnapshot();
    });
  }
});

describe('DATEADD', () => {
  it('shifts by days with a bound count', () => {
    expect(lines("DATEADD('day', 3, [t.d])")).toMatchInlineSnapshot(`
      "postgresql: ("t"."d" + CAST($1 AS integer) * INTERVAL '1 day')  [3]
      mysql:      DATE_ADD(\`t\`.\`d\`, INTERVAL ? DAY)  [3]
      clickhouse: addDays(\`t\`.\`d\`, 3)
      duckdb:     ("t"."d" + CAST($1 AS INTEGER) * INTERVAL 1 DAY)  [3]"
    `);
  });

  for (const unit of ['year', 'quarter', 'month', 'week', 'hour', 'minute']) {
    it(`shifts by ${unit}`, () => {
      expect(lines(`DATEADD('${unit}', [t.n], [t.d])`)).toMatchSnapshot();
    });
  }
});

describe('DATEDIFF', () => {
  it('counts day boundaries', () => {
    expect(lines("DATEDIFF('day', [t.a], [t.b])")).toMatchInlineSnapshot(`
      "postgresql: (CAST("t"."b" AS date) - CAST("t"."a" AS date))  []
      mysql:      DATEDIFF(\`t\`.\`b\`, \`t\`.\`a\`)  []
      clickhouse: (toInt64(toRelativeDayNum(\`t\`.\`b\`)) - toInt64(toRelativeDayNum(\`t\`.\`a\`)))
      duckdb:     date_diff('day', "t"."a", "t"."b")  []"
    `);
  });

  for (const unit of ['year', 'quarter', 'month', 'week', 'hour', 'minute']) {
    it(`counts ${unit} boundaries`, () => {
      expect(lines(`DATEDIFF('${unit}', [t.a], [t.b])`)).toMatchSnapshot();
    });
  }
});

describe('TODAY and NOW', () => {
  it('writes the current date and the current wall-clock time', () => {
    expect(lines("DATEDIFF('day', TODAY(), NOW())")).toMatchInlineSnapshot(`
      "postgresql: (CAST(LOCALTIMESTAMP AS date) - CAST(CURRENT_DATE AS date))  []
      mysql:      DATEDIFF(NOW(), CURRENT_DATE)  []
      clickhouse: (toInt64(toRelativeDayNum(now())) - toInt64(toRelativeDayNum(today())))
      duckdb:     date_diff('day', CURRENT_DATE, CAST(current_timestamp AS TIMESTAMP))  []"
    `);
  });
});
