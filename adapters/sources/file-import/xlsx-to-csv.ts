import ExcelJS from 'exceljs';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';

export interface SheetCsv {
  sheet: string;
  csvPath: string;
  rows: number;
}

/**
 * Streams the sheets of an XLSX workbook into CSV files (one per sheet, or only `sheet`), for DuckDB's
 * read_csv to type and load. exceljs's streaming reader keeps memory flat for large workbooks.
 */
export async function xlsxToCsv(input: string, dir: string, sheet?: string): Promise<SheetCsv[]> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore',
  });
  const out: SheetCsv[] = [];
  let index = 0;
  for await (const ws of reader) {
    const name = String((ws as unknown as { name?: string }).name ?? `Sheet${index + 1}`);
    index++;
    if (sheet !== undefined && name !== sheet) continue;
    const csvPath = join(dir, `sheet-${index}.csv`);
    const file = createWriteStream(csvPath);
    let rows = 0;
    for await (const row of ws as unknown as AsyncIterable<ExcelJS.Row>) {
      const values = row.values as unknown[];
      const cells: string[] = [];
      for (let c = 1; c < values.length; c++) cells.push(csvField(cellText(values[c])));
      // Rows are sparse: exceljs skips empty ones, and DuckDB pads short rows with NULL (null_padding).
      if (!file.write(cells.join(',') + '\n')) await once(file, 'drain');
      rows++;
    }
    await closeStream(file);
    out.push({ sheet: name, csvPath, rows });
  }
  return out;
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) return dateText(v);
  if (typeof v === 'object') {
    const o = v as { richText?: { text: string }[]; result?: unknown; text?: unknown; error?: unknown; formula?: unknown };
    if (o.richText) return o.richText.map((r) => r.text).join('');
    if ('result' in o || 'formula' in o) return cellText(o.result);
    if (o.text !== undefined) return cellText(o.text);
    if (o.error !== undefined) return '';
  }
  return String(v);
}

/** Excel dates are wall-clock values (exceljs gives them as UTC instants): keep the wall clock. */
function dateText(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString(); // 2024-01-02T10:00:00.000Z
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19);
  const ms = iso.slice(20, 23);
  if (time === '00:00:00' && ms === '000') return date;
  return `${date} ${time}${ms !== '000' ? '.' + ms : ''}`;
}

function csvField(s: string): string {
  return /[",\n\r]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function closeStream(file: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    file.on('error', reject);
    file.end(() => resolve());
  });
}
