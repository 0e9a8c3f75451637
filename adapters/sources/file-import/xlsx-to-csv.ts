import type ExcelJS from 'exceljs';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { xlsxSheetNames } from './xlsx-sheet-names';

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
  // exceljs looks a sheet's name up in xl/workbook.xml, which may come after the sheet in the zip or (issue #3064)
  // never reach its streaming reader, which now and then loses a zip entry altogether. The names (and the list of
  // sheets to expect) come from the central directory; a read that missed a sheet, or the shared strings (its text
  // cells then come as { sharedString: n }: seen in about one read in eight with ten workbooks read at once), is
  // done again.
  const names = await xlsxSheetNames(input);
  const expected = [...names.values()].map((n) => n.name).filter((n) => sheet === undefined || n === sheet);
  for (let attempt = 1; ; attempt++) {
    const sheets = await readSheets(input, dir, names, sheet).catch((e: unknown) => {
      if (e instanceof LostSharedStrings && attempt < READ_ATTEMPTS) return null;
      throw e;
    });
    if (!sheets) continue;
    const missing = expected.filter((n) => !sheets.some((s) => s.sheet === n));
    if (missing.length === 0) return sheets;
    if (attempt >= READ_ATTEMPTS) throw new Error(`не удалось прочитать листы: ${missing.join(', ')}`);
  }
}

const READ_ATTEMPTS = 5;

/** A text cell refers to the shared strings, and the reader has none: it lost xl/sharedStrings.xml. */
class LostSharedStrings extends Error {
  constructor() {
    super('не удалось прочитать общие строки книги (xl/sharedStrings.xml)');
  }
}

async function readSheets(
  input: string,
  dir: string,
  names: Map<string, { name: string; position: number }>,
  sheet: string | undefined,
): Promise<SheetCsv[]> {
  // Loaded on the first workbook, not at start: exceljs alone costs the server ~30 MB of memory.
  const { default: excel } = await import('exceljs');
  const reader = new excel.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  // An empty model keeps exceljs's name lookup from throwing before xl/workbook.xml is read.
  const model = reader as unknown as { model?: { sheets?: { name: string }[] } };
  model.model ??= { sheets: [] };
  const out: (SheetCsv & { position: number })[] = [];
  let index = 0;
  // A text cell the reader could not resolve comes as { sharedString: n }: looked up in the reader's table, if any.
  const shared = () => (reader as unknown as { sharedStrings?: unknown[] }).sharedStrings;
  for await (const ws of reader) {
    const w = ws as unknown as { name?: string; id?: unknown };
    // Unmatched in exceljs's model, a sheet is called Sheet<file number>: the real name is in `names`.
    const matched = w.name !== undefined && !!model.model?.sheets?.some((s) => s.name === w.name);
    const known = matched ? undefined : names.get(String(w.id));
    const name = String(known?.name ?? w.name ?? `Sheet${index + 1}`);
    const position = known?.position ?? [...names.values()].find((n) => n.name === name)?.position ?? 1000 + index;
    index++;
    if (sheet !== undefined && name !== sheet) {
      // A skipped sheet is still read to its end: exceljs cannot move on from a half-read one (it fails, or throws
      // from its temp files outside the promise chain, which would take the process down).
      for await (const _row of ws as unknown as AsyncIterable<unknown>) void _row;
      continue;
    }
    const csvPath = join(dir, `sheet-${index}.csv`);
    const file = createWriteStream(csvPath);
    let rows = 0;
    for await (const row of ws as unknown as AsyncIterable<ExcelJS.Row>) {
      const values = row.values as unknown[];
      const cells: string[] = [];
      for (let c = 1; c < values.length; c++) cells.push(csvField(cellText(values[c], shared)));
      // Rows are sparse: exceljs skips empty ones, and DuckDB pads short rows with NULL (null_padding).
      if (!file.write(cells.join(',') + '\n')) await once(file, 'drain');
      rows++;
    }
    await closeStream(file);
    out.push({ sheet: name, csvPath, rows, position });
  }
  // Workbook order, whatever order the zip stored the sheets in.
  return out.sort((a, b) => a.position - b.position).map(({ position: _p, ...s }) => s);
}

function cellText(v: unknown, shared?: () => unknown[] | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) return dateText(v);
  if (typeof v === 'object') {
    const o = v as {
      sharedString?: unknown;
      richText?: { text: string }[];
      result?: unknown;
      text?: unknown;
      error?: unknown;
      formula?: unknown;
    };
    if (typeof o.sharedString === 'number') {
      const text = shared?.()?.[o.sharedString];
      if (text === undefined) throw new LostSharedStrings();
      return cellText(text);
    }
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
