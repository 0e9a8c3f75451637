import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExportLimits, LIMIT_MSG } from '../../../server/file-export/limits';
import type { RowsBatch, WidgetRowsSource } from '../../../server/file-export/widget-rows';
import { writeCsv, writeXlsx } from '../../../server/file-export/write-table';

/*
 * The table writers on their own: max_file_size_mb stops the writing (and the reading) at the limit rather than after
 * the whole file, XLSX cells follow their column's type, and CSV text a spreadsheet would run as a formula is inert.
 */

const MB = 1024 * 1024;
const limits = (over: Partial<ExportLimits> = {}): ExportLimits => ({
  max_rows: 1_000_000,
  max_pages: 50,
  max_file_size_mb: 1,
  timeout_seconds: 600,
  max_concurrent_jobs: 2,
  ...over,
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'write-table-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A source of `batches` batches of 1,000 rows of 200 random hex characters (~200 KB a batch, barely compressible). */
function bigSource(batches: number): WidgetRowsSource & { read: () => number } {
  let read = 0;
  return {
    name: 'Большая таблица',
    columns: [
      { key: 'n', title: 'Номер' },
      { key: 'noise', title: 'Шум' },
    ],
    read: () => read,
    async *batches(): AsyncGenerator<RowsBatch> {
      for (let b = 0; b < batches; b++) {
        read++;
        const rows = Array.from({ length: 1_000 }, (_, i) => [b * 1_000 + i, randomBytes(100).toString('hex')]);
        yield { rows, types: ['integer', 'string'] };
      }
    },
  };
}

describe('max_file_size_mb while writing', () => {
  for (const [format, write] of [
    ['csv', writeCsv],
    ['xlsx', writeXlsx],
  ] as const) {
    it(`${format}: stops at the limit, naming it; the file never grows past it and the rows stop being read`, async () => {
      const file = path.join(dir, `big.${format}`);
      // About 20 MB of rows against a 1 MB limit.
      const source = bigSource(100);
      await expect(write(file, source, { limits: limits() })).rejects.toThrow(LIMIT_MSG.size(1));
      expect(LIMIT_MSG.size(1)).toBe('Превышен лимит экспорта max_file_size_mb: файл больше 1 МБ');
      expect((await stat(file)).size).toBeLessThanOrEqual(MB);
      expect(source.read()).toBeLessThan(20);
    });
  }

  it('a file under the limit is written whole', async () => {
    const file = path.join(dir, 'small.csv');
    await writeCsv(file, bigSource(2), { limits: limits() });
    expect((await stat(file)).size).toBeGreaterThan(400_000);
  });
});

describe('xlsx cells by column type', () => {
  it('text stays text (leading zeros, ISO-looking strings), numbers and dates by their column', async () => {
    const source: WidgetRowsSource = {
      name: 'Типы',
      columns: ['code', 'label', 'amount', 'count', 'day', 'at', 'flag', 'other'].map((key) => ({ key, title: key })),
      async *batches(): AsyncGenerator<RowsBatch> {
        yield {
          types: ['string', 'string', 'float', 'integer', 'date', 'datetime', 'boolean', 'unknown'],
          rows: [
            ['00123', '2024-01-05', '12.50', 7n, '2024-03-01', '2024-03-01 10:20:30', true, { a: 1 }],
            ['007', '1e5', '***', '42', null, '2024-03-02T01:02:03+03:00', false, 'x'],
          ],
        };
      },
    };
    const file = path.join(dir, 'types.xlsx');
    await writeXlsx(file, source, { limits: limits({ max_file_size_mb: 10 }) });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const sheet = wb.worksheets[0];
    const row = (n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
    expect(row(2)).toEqual([
      '00123',
      '2024-01-05',
      12.5,
      7,
      new Date('2024-03-01T00:00:00Z'),
      new Date('2024-03-01T10:20:30Z'),
      true,
      '{"a":1}',
    ]);
    // A masked number stays the mask; an empty date stays empty.
    expect(row(3)).toEqual(['007', '1e5', '***', 42, undefined, new Date('2024-03-01T22:02:03Z'), false, 'x']);
    expect(sheet.getRow(2).getCell(5).numFmt).toBe('yyyy-mm-dd');
    expect(sheet.getRow(2).getCell(6).numFmt).toBe('yyyy-mm-dd hh:mm:ss');
  });
});

describe('csv cells: text a spreadsheet would take for a formula is inert, numbers by their column stay numbers', () => {
  it("=, +, -, @, tab and CR-led text gets an apostrophe; a number column's -5 (number, bigint or driver text) does not", async () => {
    const source: WidgetRowsSource = {
      name: 'Формулы',
      columns: ['text', 'amount', 'count', 'other'].map((key) => ({ key, title: key })),
      async *batches(): AsyncGenerator<RowsBatch> {
        yield {
          types: ['string', 'float', 'integer', 'unknown'],
          rows: [
            ['=1+2', -5, -5n, '@SUM(A1)'],
            ['-5', '-5.00', '-5', -5],
            ['+7', '-1e3', '+3', '\tx'],
            ['\rx', '-***', '=1', 'чай'],
          ],
        };
      },
    };
    const file = path.join(dir, 'formulas.csv');
    await writeCsv(file, source, { limits: limits() });
    expect(await readFile(file, 'utf8')).toBe(
      [
        '\ufefftext,amount,count,other',
        "'=1+2,-5,-5,'@SUM(A1)",
        "'-5,-5.00,-5,-5",
        "'+7,-1e3,+3,'\tx",
        `"'\rx",'-***,'=1,чай`,
        '',
      ].join('\n'),
    );
  });

  it('xlsx writes such text as a text cell, never a formula', async () => {
    const source: WidgetRowsSource = {
      name: 'Формулы',
      columns: [{ key: 'text', title: '=Заголовок' }],
      async *batches(): AsyncGenerator<RowsBatch> {
        yield { types: ['string'], rows: [['=1+2'], ['@SUM(A1)']] };
      },
    };
    const file = path.join(dir, 'formulas.xlsx');
    await writeXlsx(file, source, { limits: limits() });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const cells = [1, 2, 3].map((n) => wb.worksheets[0].getRow(n).getCell(1));
    expect(cells.map((c) => [c.type, c.value])).toEqual([
      [ExcelJS.ValueType.String, '=Заголовок'],
      [ExcelJS.ValueType.String, '=1+2'],
      [ExcelJS.ValueType.String, '@SUM(A1)'],
    ]);
  });
});
