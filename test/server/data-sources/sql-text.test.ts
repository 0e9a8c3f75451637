import { describe, expect, it } from 'vitest';
import { columnValuesSql, previewSql } from '../../../server/data-sources/browse';
import { validationPlan } from '../../../server/data-sources/sql-validation';
import { tableNameFor } from '../../../server/data-sources/files';

const t = { schema: 'sch"ema', name: 'ta`ble; DROP' };

describe('SQL of the data browser', () => {
  it('quotes schema and table in each dialect and reads one row more than the limit', () => {
    expect(previewSql('postgresql', t, 100)).toBe('SELECT * FROM "sch""ema"."ta`ble; DROP" LIMIT 101');
    expect(previewSql('duckdb', t, 5)).toBe('SELECT * FROM "sch""ema"."ta`ble; DROP" LIMIT 6');
    expect(previewSql('mysql', t, 5)).toBe('SELECT * FROM `sch"ema`.`ta``ble; DROP` LIMIT 6');
    expect(previewSql('clickhouse', t, 5)).toBe('SELECT * FROM `sch"ema`.`ta\\`ble; DROP` LIMIT 6');
  });

  it('binds the search text, or escapes it on ClickHouse', () => {
    expect(columnValuesSql('postgresql', t, 'c"ity', "o'k", 10)).toEqual({
      sql: 'SELECT DISTINCT "c""ity" AS value FROM "sch""ema"."ta`ble; DROP" WHERE "c""ity" IS NOT NULL AND strpos(lower(CAST("c""ity" AS text)), lower($1)) > 0 ORDER BY "c""ity" LIMIT 11',
      params: ["o'k"],
    });
    expect(columnValuesSql('mysql', t, 'city', 'x', 10).sql).toContain(
      'LOCATE(LOWER(?), LOWER(CAST(`city` AS CHAR))) > 0',
    );
    const ch = columnValuesSql('clickhouse', t, 'city', "a'\\b", 10);
    expect(ch.params).toEqual([]);
    expect(ch.sql).toContain("positionCaseInsensitiveUTF8(toString(`city`), 'a\\'\\\\b') > 0");
    expect(columnValuesSql('duckdb', t, 'city', undefined, 3)).toEqual({
      sql: 'SELECT DISTINCT "city" AS value FROM "sch""ema"."ta`ble; DROP" WHERE "city" IS NOT NULL ORDER BY "city" LIMIT 4',
      params: [],
    });
  });
});

describe('validationPlan', () => {
  it('wraps queries, explains data changes, leaves the rest unchecked', () => {
    expect(validationPlan('postgresql', 'SELECT 1 -- note\n;')).toEqual({
      kind: 'wrap',
      sql: 'SELECT * FROM (\nSELECT 1 -- note\n) AS q LIMIT 0',
      statement: 'SELECT 1 -- note',
    });
    expect(validationPlan('mysql', 'with a as (select 1) select * from a').kind).toBe('wrap');
    expect(validationPlan('postgresql', 'UPDATE t SET a = 1')).toMatchObject({
      kind: 'explain',
      sql: 'EXPLAIN UPDATE t SET a = 1',
    });
    expect(validationPlan('clickhouse', 'INSERT INTO t VALUES (1)').kind).toBe('unchecked');
    expect(validationPlan('postgresql', 'CREATE TABLE t (a int)').kind).toBe('unchecked');
    // EXPLAIN ANALYZE would execute: never wrapped or explained
    expect(validationPlan('postgresql', 'EXPLAIN ANALYZE DELETE FROM t').kind).toBe('unchecked');
    expect(validationPlan('postgresql', '(ANALYZE) DELETE FROM t').kind).toBe('unchecked');
  });

  it('refuses empty text, several statements and unknown commands', () => {
    expect(validationPlan('postgresql', ' ;; ')).toEqual({ kind: 'invalid', message: 'Запрос пуст' });
    expect(validationPlan('postgresql', 'SELECT 1; DROP TABLE t')).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('их 2'),
    });
    expect(validationPlan('mysql', "SELECT ';' AS x").kind).toBe('wrap');
    expect(validationPlan('duckdb', 'SELEC 1')).toEqual({
      kind: 'invalid',
      message: 'Синтаксическая ошибка: неизвестная команда «SELEC»',
    });
  });
});

describe('tableNameFor', () => {
  it('makes a readable table name from the file name', () => {
    expect(tableNameFor('Продажи 2024 (итог).csv')).toBe('Продажи_2024_итог');
    expect(tableNameFor('2024.xlsx')).toBe('t_2024');
    expect(tableNameFor('...csv')).toBe('data');
    expect(tableNameFor(`${'x'.repeat(100)}.csv`)).toHaveLength(63);
  });
});
