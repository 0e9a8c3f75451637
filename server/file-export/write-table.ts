import { EventEmitter, once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import { csvCell, inertText } from './csv-cell';
import { ExportLimitError, LIMIT_MSG, type ExportLimits } from './limits';
import type { PrimitiveType } from '../query/expr';
import type { WidgetRowsSource } from './widget-rows';

/*
 * CSV and XLSX files of a widget's rows (POST /api/exports, produceExport), written as the stream's batches arrive,
 * waiting for the file to drain: memory holds one batch. Passing max_rows stops the stream (the query is cancelled)
 * and fails naming the limit; so does passing max_file_size_mb, checked on the bytes as they are written. CSV is
 * UTF-8 with a BOM (Excel reads it as UTF-8), text that a spreadsheet would take for a formula made inert
 * (csv-cell.ts); XLSX goes through exceljs's streaming WorkbookWriter with each column
 * written by its type: numbers as numbers, dates as dates, text as text.
 */

export interface TableProgress {
  (rows: number): void;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const HAS_ZONE = /(Z|[+-]\d{2}(:?\d{2})?)$/;
const FORMATS: Partial<Record<PrimitiveType, string>> = { date: 'yyyy-mm-dd', datetime: 'yyyy-mm-dd hh:mm:ss' };

/**
 * A cell as XLSX wants it, by its column's type: numbers (numeric text and bigint from the drivers) as numbers,
 * dates and timestamps as dates, text always as text ("00123" keeps its zeros, "2024-01-05" in a text field stays
 * text). A value that does not read as its type (a mask such as "***") is written as it came.
 */
function xlsxCell(v: unknown, type: PrimitiveType): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'integer':
    case 'float': {
      const n = typeof v === 'number' ? v : typeof v === 'bigint' || typeof v === 'string' ? Number(v) : NaN;
      return Number.isFinite(n) && !(typeof v === 'string' && v.trim() === '') ? n : plain(v);
    }
    case 'date':
    case 'datetime': {
      if (v instanceof Date) return v;
      if (typeof v !== 'string') return plain(v);
      // Dates and timestamps without a zone are wall-clock values: written as they read, never shifted by a zone.
      const text = DATE_ONLY.test(v) ? `${v}T00:00:00Z` : HAS_ZONE.test(v) ? v : `${v.replace(' ', 'T')}Z`;
      const d = new Date(text);
      return Number.isNaN(d.getTime()) ? v : d;
    }
    case 'boolean':
      return typeof v === 'boolean' ? v : plain(v);
    case 'string':
      return typeof v === 'string' ? v : String(plain(v));
    default:
      return plain(v);
  }
}

/** A value of no known type: numbers, booleans and dates as they are, bigint as a number, anything else as text. */
function plain(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) return JSON.stringify(v);
  return v;
}

interface WriteOptions {
  limits: ExportLimits;
  signal?: AbortSignal;
  onRows?: TableProgress;
}

function checkRows(count: number, limits: ExportLimits): void {
  if (count > limits.max_rows) throw new ExportLimitError(LIMIT_MSG.rows(limits.max_rows));
}

const batchesOf = (source: WidgetRowsSource, opts: WriteOptions) =>
  source.batches({
    maxRows: opts.limits.max_rows,
    signal: opts.signal,
    timeoutMs: opts.limits.timeout_seconds * 1000,
  });

/**
 * The file's bytes pass through this on their way to disk: once they would go over max_file_size_mb nothing more is
 * written (the rest is dropped, the file never grows past the limit) and the writer stops reading rows.
 */
class SizeGuard extends Transform {
  private written = 0;
  exceeded = false;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (!this.exceeded && this.written + chunk.length > this.maxBytes) this.exceeded = true;
    if (this.exceeded) return done();
    this.written += chunk.length;
    done(null, chunk);
  }
}

/** A file of at most max_file_size_mb: the guard in front of it and a promise of its end (or its error). */
function limitedFile(filePath: string, limits: ExportLimits) {
  const guard = new SizeGuard(limits.max_file_size_mb * 1024 * 1024);
  const file = createWriteStream(filePath);
  const done = pipeline(guard, file);
  // Awaited at the end; a disk error before then must not be an unhandled rejection meanwhile.
  done.catch(() => undefined);
  const check = () => {
    if (guard.exceeded) throw new ExportLimitError(LIMIT_MSG.size(limits.max_file_size_mb));
  };
  return { guard, file, done, check };
}

export async function writeCsv(filePath: string, source: WidgetRowsSource, opts: WriteOptions): Promise<void> {
  // csv-stringify loads with the first CSV export, not with the server.
  const { stringify } = await import('csv-stringify');
  const out = limitedFile(filePath, opts.limits);
  const csv = stringify({
    bom: true,
    header: true,
    // A header is a shelf's alias, text anyone editing the widget writes: made inert like any text cell.
    columns: source.columns.map((c) => inertText(c.title)),
    cast: { date: (d) => d.toISOString(), boolean: (b) => (b ? 'true' : 'false') },
  });
  csv.pipe(out.guard);
  let count = 0;
  try {
    for await (const { rows, types } of batchesOf(source, opts)) {
      count += rows.length;
      checkRows(count, opts.limits);
      for (const row of rows) if (!csv.write(row.map((v, i) => csvCell(v, types[i])))) await once(csv, 'drain');
      opts.onRows?.(count);
      out.check();
    }
  } finally {
    csv.end();
    await out.done;
  }
  out.check();
}

/**
 * exceljs (4.4, stream-buf in batch mode) hands a sheet's XML to its zip archiver without waiting, so without this the
 * rows pile up in the archiver's input while the deflate and the file lag behind (memory grows with the file, and the
 * size limit is seen only at the end). Waiting for that input to drain carries the file's backpressure back to the
 * rows. The input is the archiver's PassThrough (readable-stream 2) piped from the sheet's stream; if exceljs ever
 * changes shape this waits for nothing and the writer still works, only without the backpressure.
 */
async function zipCaughtUp(sheet: ExcelJS.Worksheet, done: Promise<void>): Promise<void> {
  const input = (sheet as unknown as { stream?: { pipes?: unknown[] } }).stream?.pipes?.[0] as
    (EventEmitter & { _writableState?: { needDrain?: boolean } }) | undefined;
  if (input instanceof EventEmitter && input._writableState?.needDrain)
    await Promise.race([once(input, 'drain'), done]);
}

export async function writeXlsx(filePath: string, source: WidgetRowsSource, opts: WriteOptions): Promise<void> {
  // exceljs loads with the first XLSX export, not with the server.
  const { default: Excel } = await import('exceljs');
  // The file stream is ours so that each batch waits for it to drain (exceljs writes it through its zip archiver).
  const out = limitedFile(filePath, opts.limits);
  const wb = new Excel.stream.xlsx.WorkbookWriter({ stream: out.guard, useStyles: true, useSharedStrings: false });
  const sheet = wb.addWorksheet(source.name.slice(0, 31).replace(/[\\/?*[\]:]/g, ' ') || 'Лист1');
  sheet.columns = source.columns.map((c) => ({
    header: c.title,
    key: c.key,
    width: Math.min(40, Math.max(10, c.title.length + 2)),
  }));
  let count = 0;
  try {
    for await (const { rows, types } of batchesOf(source, opts)) {
      count += rows.length;
      checkRows(count, opts.limits);
      for (const row of rows) {
        const r = sheet.addRow(row.map((v, i) => xlsxCell(v, types[i])));
        r.eachCell((cell, col) => {
          const format = FORMATS[types[col - 1]];
          if (format && cell.value instanceof Date) cell.numFmt = format;
        });
        r.commit();
      }
      opts.onRows?.(count);
      // Let the archiver compress what the batch wrote, then wait for the file, before reading the next batch.
      await setImmediate();
      await zipCaughtUp(sheet, out.done);
      if (out.guard.writableNeedDrain) await Promise.race([once(out.guard, 'drain'), out.done]);
      out.check();
    }
  } finally {
    sheet.commit();
    await wb.commit();
    await out.done;
  }
  out.check();
}
