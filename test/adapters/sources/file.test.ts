import { DuckDBInstance } from '@duckdb/node-api';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, importFile, type Connector } from '../../../adapters/sources';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-source-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = (name: string) => join(dir, name);

async function fileConnector(duckdbPath: string, tables: string[]): Promise<Connector> {
  return createConnector('file', { file: { duckdb_path: duckdbPath, tables } });
}

describe('file import', () => {
  it('imports a UTF-8 CSV with detected types', async () => {
    await writeFile(
      at('sales.csv'),
      'id,city,amount,day,created,paid,note\n' +
        '1,Москва,10.5,2024-01-02,2024-01-02 10:11:12,true,\n' +
        '2,Казань,20,2024-02-03,2024-02-03 00:00:00,false,"with, comma"\n',
    );
    const r = await importFile({
      input_path: at('sales.csv'),
      format: 'csv',
      duckdb_path: at('sales.duckdb'),
      table_name: 'sales',
    });
    expect(r.tables).toEqual(['sales']);
    expect(r.row_count).toBe(2);
    expect(r.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
      ['day', 'date'],
      ['created', 'datetime'],
      ['paid', 'boolean'],
      ['note', 'string'],
    ]);
    const c = await fileConnector(at('sales.duckdb'), r.tables);
    try {
      await c.check();
      const q = await c.query('SELECT * FROM sales ORDER BY id', []);
      expect(q.rows).toEqual([
        [1, 'Москва', 10.5, '2024-01-02', '2024-01-02T10:11:12', true, null],
        [2, 'Казань', 20, '2024-02-03', '2024-02-03T00:00:00', false, 'with, comma'],
      ]);
    } finally {
      await c.close();
    }
  });

  it('types a column from the whole file, not the first rows', async () => {
    const lines = ['n'];
    for (let i = 0; i < 30_000; i++) lines.push(String(i));
    lines.push('not a number');
    await writeFile(at('late.csv'), lines.join('\n') + '\n');
    const r = await importFile({
      input_path: at('late.csv'),
      format: 'csv',
      duckdb_path: at('late.duckdb'),
      table_name: 't',
    });
    expect(r.columns[0].primitive_type).toBe('string');
    expect(r.row_count).toBe(30_001);
  });

  it('converts a windows-1251 CSV with ; and decimal commas', async () => {
    const text =
      'Город;Сумма;Дата\nМосква;10,5;01.02.2024\nСанкт-Петербург;1 234,75;15.03.2024\nКазань;30;20.04.2024\n';
    await writeFile(at('cp1251.csv'), iconv.encode(text, 'windows-1251'));
    const r = await importFile({
      input_path: at('cp1251.csv'),
      format: 'csv',
      duckdb_path: at('cp1251.duckdb'),
      table_name: 'города',
    });
    expect(r.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['Город', 'string'],
      ['Сумма', 'float'],
      ['Дата', 'date'],
    ]);
    const c = await fileConnector(at('cp1251.duckdb'), r.tables);
    try {
      const q = await c.query('SELECT * FROM "города" ORDER BY 1', []);
      expect(q.rows).toEqual([
        ['Казань', 30, '2024-04-20'],
        ['Москва', 10.5, '2024-02-01'],
        ['Санкт-Петербург', 1234.75, '2024-03-15'],
      ]);
    } finally {
      await c.close();
    }
  });

  it('honours has_header and delimiter', async () => {
    await writeFile(at('plain.csv'), '1|a\n2|b\n');
    const r = await importFile({
      input_path: at('plain.csv'),
      format: 'csv',
      has_header: false,
      delimiter: '|',
      duckdb_path: at('plain.duckdb'),
      table_name: 't',
    });
    expect(r.row_count).toBe(2);
    expect(r.columns.map((c) => c.primitive_type)).toEqual(['integer', 'string']);
  });

  it('imports every sheet of an XLSX, or the named one', async () => {
    const wb = new ExcelJS.Workbook();
    const s1 = wb.addWorksheet('Продажи');
    s1.addRow(['id', 'товар', 'цена', 'дата']);
    s1.addRow([1, 'чай', 10.5, new Date(Date.UTC(2024, 0, 2))]);
    s1.addRow([2, 'кофе', { formula: 'C2*2', result: 21 }, new Date(Date.UTC(2024, 1, 3))]);
    s1.getColumn(4).numFmt = 'yyyy-mm-dd';
    const s2 = wb.addWorksheet('Города');
    s2.addRow(['город']);
    s2.addRow(['Москва']);
    wb.addWorksheet('Пустой');
    await wb.xlsx.writeFile(at('book.xlsx'));

    const all = await importFile({
      input_path: at('book.xlsx'),
      format: 'xlsx',
      duckdb_path: at('book.duckdb'),
      table_name: 'book',
    });
    expect(all.tables).toEqual(['Продажи', 'Города']);
    expect(all.details.map((d) => [d.name, d.sheet, d.row_count])).toEqual([
      ['Продажи', 'Продажи', 2],
      ['Города', 'Города', 1],
    ]);
    expect(all.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['id', 'integer'],
      ['товар', 'string'],
      ['цена', 'float'],
      ['дата', 'date'],
    ]);
    const c = await fileConnector(at('book.duckdb'), all.tables);
    try {
      expect((await c.listTables('main')).map((t) => t.name).sort()).toEqual(['Города', 'Продажи']);
      const q = await c.query('SELECT * FROM "Продажи" ORDER BY id', []);
      expect(q.rows).toEqual([
        [1, 'чай', 10.5, '2024-01-02'],
        [2, 'кофе', 21, '2024-02-03'],
      ]);
    } finally {
      await c.close();
    }

    const one = await importFile({
      input_path: at('book.xlsx'),
      format: 'xlsx',
      sheet: 'Города',
      duckdb_path: at('city.duckdb'),
      table_name: 'cities',
    });
    expect(one.tables).toEqual(['cities']);
    expect(one.row_count).toBe(1);
    await expect(
      importFile({
        input_path: at('book.xlsx'),
        format: 'xlsx',
        sheet: 'Нет такого',
        duckdb_path: at('x.duckdb'),
        table_name: 't',
      }),
    ).rejects.toMatchObject({ kind: 'settings', message: 'В файле нет листа «Нет такого»' });
  });

  it('imports Parquet', async () => {
    const inst = await DuckDBInstance.create(':memory:');
    const conn = await inst.connect();
    await conn.run(`COPY (SELECT range AS id, 'x' || range AS label, DATE '2024-01-01' + range::int AS day FROM range(1000))
                    TO '${at('data.parquet')}' (FORMAT parquet)`);
    conn.closeSync();
    inst.closeSync();
    const r = await importFile({
      input_path: at('data.parquet'),
      format: 'parquet',
      duckdb_path: at('pq.duckdb'),
      table_name: 'pq',
    });
    expect(r.row_count).toBe(1000);
    expect(r.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['id', 'integer'],
      ['label', 'string'],
      ['day', 'date'],
    ]);
  });

  it('rejects broken files with a clear message and leaves the previous import in place', async () => {
    await writeFile(at('keep.csv'), 'a\n1\n');
    await importFile({ input_path: at('keep.csv'), format: 'csv', duckdb_path: at('keep.duckdb'), table_name: 't' });

    await writeFile(at('binary.csv'), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff, 0x00, 0x0a, 0x01]));
    await expect(
      importFile({ input_path: at('binary.csv'), format: 'csv', duckdb_path: at('keep.duckdb'), table_name: 't' }),
    ).rejects.toMatchObject({ kind: 'settings', message: expect.stringContaining('двоичные данные') });
    await writeFile(at('broken.xlsx'), 'this is not a zip archive at all');
    await expect(
      importFile({ input_path: at('broken.xlsx'), format: 'xlsx', duckdb_path: at('keep.duckdb'), table_name: 't' }),
    ).rejects.toMatchObject({ kind: 'settings', message: expect.stringContaining('Не удалось прочитать файл XLSX') });
    await writeFile(at('broken.parquet'), 'PAR1 garbage');
    await expect(
      importFile({
        input_path: at('broken.parquet'),
        format: 'parquet',
        duckdb_path: at('keep.duckdb'),
        table_name: 't',
      }),
    ).rejects.toMatchObject({
      kind: 'settings',
      message: expect.stringContaining('Не удалось прочитать файл Parquet'),
    });
    await writeFile(at('empty.csv'), '');
    await expect(
      importFile({ input_path: at('empty.csv'), format: 'csv', duckdb_path: at('keep.duckdb'), table_name: 't' }),
    ).rejects.toMatchObject({ kind: 'settings', message: 'Файл пуст' });

    const c = await fileConnector(at('keep.duckdb'), ['t']);
    try {
      expect((await c.query('SELECT a FROM t', [])).rows).toEqual([[1]]);
    } finally {
      await c.close();
    }
    // No temp files left behind by the failures.
    expect((await readdir(dir)).filter((f) => f.startsWith('.import-'))).toEqual([]);
  });

  it('replaces the data of a source while a connector has it open', async () => {
    await writeFile(at('v1.csv'), 'v\n1\n');
    await writeFile(at('v2.csv'), 'v,w\n2,b\n3,c\n');
    await importFile({
      input_path: at('v1.csv'),
      format: 'csv',
      duckdb_path: at('replace.duckdb'),
      table_name: 'data',
    });
    const c = await fileConnector(at('replace.duckdb'), ['data']);
    try {
      expect((await c.query('SELECT * FROM data', [])).rows).toEqual([[1]]);
      await importFile({
        input_path: at('v2.csv'),
        format: 'csv',
        duckdb_path: at('replace.duckdb'),
        table_name: 'data',
      });
      expect((await c.query('SELECT * FROM data ORDER BY v', [])).rows).toEqual([
        [2, 'b'],
        [3, 'c'],
      ]);
    } finally {
      await c.close();
    }
  });

  it('imports a 1M-row CSV in seconds', async () => {
    const path = at('big.csv');
    const out = createWriteStream(path);
    out.write('id,name,amount,created\n');
    for (let i = 0; i < 1_000_000; i++) {
      const line = `${i},name ${i % 1000},${(i % 9973) / 7},2024-01-01 ${String(i % 24).padStart(2, '0')}:00:00\n`;
      if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((r) => out.end(r));
    const started = Date.now();
    const r = await importFile({ input_path: path, format: 'csv', duckdb_path: at('big.duckdb'), table_name: 'big' });
    const ms = Date.now() - started;
    expect(r.row_count).toBe(1_000_000);
    expect(r.columns.map((c) => c.primitive_type)).toEqual(['integer', 'string', 'float', 'datetime']);
    expect(ms).toBeLessThan(15_000);
  }, 60_000);
});

describe('file connector', () => {
  let c: Connector;

  beforeAll(async () => {
    await writeFile(at('q.csv'), 'id,name\n1,a\n2,b\n3,c\n');
    const r = await importFile({
      input_path: at('q.csv'),
      format: 'csv',
      duckdb_path: at('q.duckdb'),
      table_name: 'items',
    });
    c = await fileConnector(at('q.duckdb'), r.tables);
  });

  afterAll(async () => {
    await c.close();
  });

  it('lists schemas, tables and columns', async () => {
    expect(await c.listSchemas()).toEqual(['main']);
    expect(await c.listTables('main')).toEqual([{ schema: 'main', name: 'items', kind: 'table' }]);
    expect(await c.listColumns('main', 'items')).toEqual([
      { name: 'id', db_type: 'BIGINT', primitive_type: 'integer', nullable: true },
      { name: 'name', db_type: 'VARCHAR', primitive_type: 'string', nullable: true },
    ]);
    await expect(c.listColumns('main', 'nope')).rejects.toMatchObject({ kind: 'query' });
  });

  it('normalises DuckDB values the common way', async () => {
    const r = await c.query(
      `SELECT 9007199254740993::BIGINT AS big, 12::HUGEINT AS huge, 1.50::DECIMAL(10,2) AS dec, DATE '2024-01-02' AS d,
              TIMESTAMP '2024-01-02 10:11:12.5' AS ts, TIMESTAMPTZ '2024-01-02 10:00:00+03' AS tstz, true AS b, NULL AS n,
              [1, 2] AS list, 'x'::BLOB AS blob`,
      [],
    );
    expect(r.rows).toEqual([
      [
        '9007199254740993',
        12,
        1.5,
        '2024-01-02',
        '2024-01-02T10:11:12.5',
        '2024-01-02T07:00:00',
        true,
        null,
        '[1, 2]',
        'x',
      ],
    ]);
    // DuckDB types a bare NULL as INTEGER.
    expect(r.columns.map((x) => x.primitive_type)).toEqual([
      'integer',
      'integer',
      'float',
      'date',
      'datetime',
      'datetime',
      'boolean',
      'integer',
      'unknown',
      'unknown',
    ]);
  });

  it('binds $n parameters, applies the limit and streams lazily', async () => {
    expect((await c.query('SELECT name FROM items WHERE id = $1', [2])).rows).toEqual([['b']]);
    const limited = await c.query('SELECT * FROM items ORDER BY id', [], { limit: 2 });
    expect(limited).toMatchObject({
      rows: [
        [1, 'a'],
        [2, 'b'],
      ],
      truncated: true,
    });
    const started = Date.now();
    let n = 0;
    for await (const _ of c.stream('SELECT range FROM range(1000000000000)', [])) if (++n === 3) break;
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('interrupts a query on timeout', async () => {
    await expect(c.query('SELECT count(*) FROM range(1000000000000) a', [], { timeoutMs: 300 })).rejects.toMatchObject({
      kind: 'timeout',
    });
    expect((await c.query('SELECT count(*) FROM items', [])).rows).toEqual([[3]]);
  });

  it('reports a missing file as a settings problem', async () => {
    const gone = await fileConnector(at('no-such.duckdb'), ['t']);
    await expect(gone.check()).rejects.toMatchObject({ kind: 'settings' });
    await gone.close();
  });
});
