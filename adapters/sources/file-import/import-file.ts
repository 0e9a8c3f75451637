import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { quoteIdent } from '../connector-base';
import { errorMessage } from '../driver-errors';
import { duckdbCatalogPrimitive } from '../file/types';
import { convertToUtf8, detectEncoding } from './encoding';
import { xlsxToCsv } from './xlsx-to-csv';
import { ConnectorError, type ColumnInfo } from '../types';

export type ImportFormat = 'csv' | 'xlsx' | 'parquet';

export interface ImportFileInput {
  input_path: string;
  format: ImportFormat;
  /** XLSX: the one sheet to import; without it every non-empty sheet becomes a table. */
  sheet?: string;
  /** Undefined: detected. */
  has_header?: boolean;
  /** CSV: undefined means detected. */
  delimiter?: string;
  /** The DuckDB file to (re)create; replaced atomically. */
  duckdb_path: string;
  table_name: string;
}

interface ImportedTable {
  name: string;
  /** XLSX: the sheet the table came from. */
  sheet?: string;
  row_count: number;
  columns: ColumnInfo[];
}

export interface ImportFileResult {
  /** Table names, in file / sheet order (what goes into settings.file.tables). */
  tables: string[];
  /** Rows over all tables. */
  row_count: number;
  /** Columns of the first table. */
  columns: ColumnInfo[];
  details: ImportedTable[];
}

interface CsvLoad {
  table: string;
  sheet?: string;
  path: string;
  hasHeader?: boolean;
  delimiter?: string;
  /** Our own CSV from XLSX: rows may be shorter than the widest one. */
  nullPadding?: boolean;
}

// One import at a time per target file in this process (the platform also runs one writer per file).
const locks = new Map<string, Promise<unknown>>();

/**
 * Imports an uploaded file into a fresh DuckDB database file: CSV (encoding detected and converted to UTF-8,
 * types detected by DuckDB over the whole file), XLSX (sheets streamed to CSV first), Parquet. The database is
 * written under a temporary name and renamed over `duckdb_path`, so readers never see a half-written file and a
 * replace keeps the same path.
 */
export async function importFile(input: ImportFileInput): Promise<ImportFileResult> {
  const key = input.duckdb_path;
  const previous = locks.get(key) ?? Promise.resolve();
  const run = previous.catch(() => {}).then(() => doImport(input));
  locks.set(key, run);
  try {
    return await run;
  } finally {
    if (locks.get(key) === run) locks.delete(key);
  }
}

async function doImport(input: ImportFileInput): Promise<ImportFileResult> {
  validate(input);
  const size = await stat(input.input_path).then(
    (s) => s.size,
    () => -1,
  );
  if (size < 0) throw new ConnectorError('Загруженный файл не найден', 'settings');
  if (size === 0) throw new ConnectorError('Файл пуст', 'settings');

  const work = await mkdtemp(join(dirname(input.duckdb_path), '.import-'));
  const tmpDb = join(work, `import-${randomBytes(6).toString('hex')}.duckdb`);
  try {
    const loads = await prepare(input, work);
    const details = await writeDatabase(tmpDb, input, loads);
    await rename(tmpDb, input.duckdb_path);
    return {
      tables: details.map((d) => d.name),
      row_count: details.reduce((n, d) => n + d.row_count, 0),
      columns: details[0]?.columns ?? [],
      details,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function validate(input: ImportFileInput): void {
  if (!['csv', 'xlsx', 'parquet'].includes(input.format)) {
    throw new ConnectorError(`Формат файла не поддерживается: ${input.format}`, 'settings');
  }
  if (!input.table_name?.trim()) throw new ConnectorError('Не задано имя таблицы', 'settings');
  if (input.delimiter !== undefined && (input.delimiter.length === 0 || input.delimiter.length > 4)) {
    throw new ConnectorError('Разделитель должен быть от 1 до 4 символов', 'settings');
  }
}

/** Turns the upload into what DuckDB reads: UTF-8 CSV files, or the Parquet file as is. */
async function prepare(input: ImportFileInput, work: string): Promise<CsvLoad[] | 'parquet'> {
  if (input.format === 'parquet') return 'parquet';
  if (input.format === 'csv') {
    let path = input.input_path;
    const encoding = await detectEncoding(path);
    if (encoding !== 'utf-8') {
      path = join(work, 'utf8.csv');
      try {
        await convertToUtf8(input.input_path, path, encoding);
      } catch (err) {
        throw new ConnectorError(
          `Не удалось перекодировать файл из ${encoding} в UTF-8: ${errorMessage(err)}`,
          'settings',
          { cause: err },
        );
      }
    }
    return [{ table: input.table_name, path, hasHeader: input.has_header, delimiter: input.delimiter }];
  }
  let sheets;
  try {
    sheets = await xlsxToCsv(input.input_path, work, input.sheet);
  } catch (err) {
    throw new ConnectorError(
      `Не удалось прочитать файл XLSX: файл повреждён или не является книгой Excel (${errorMessage(err)})`,
      'settings',
      { cause: err },
    );
  }
  if (input.sheet !== undefined && sheets.length === 0) {
    throw new ConnectorError(`В файле нет листа «${input.sheet}»`, 'settings');
  }
  const filled = sheets.filter((s) => s.rows > 0);
  if (filled.length === 0)
    throw new ConnectorError(input.sheet ? `Лист «${input.sheet}» пуст` : 'В файле нет данных', 'settings');
  // One sheet -> the requested table name; several -> one table per sheet, named after the sheet.
  const names = filled.length === 1 ? [input.table_name] : uniqueNames(filled.map((s) => s.sheet));
  return filled.map((s, i) => ({
    table: names[i],
    sheet: s.sheet,
    path: s.csvPath,
    hasHeader: input.has_header ?? true,
    delimiter: ',',
    nullPadding: true,
  }));
}

async function writeDatabase(
  path: string,
  input: ImportFileInput,
  loads: CsvLoad[] | 'parquet',
): Promise<ImportedTable[]> {
  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  try {
    instance = await DuckDBInstance.create(path);
    conn = await instance.connect();
    const details: ImportedTable[] = [];
    if (loads === 'parquet') {
      await load(conn, input.table_name, `read_parquet(${sqlString(input.input_path)})`, 'Parquet');
      details.push(await describe(conn, input.table_name));
    } else {
      for (const l of loads) {
        await load(conn, l.table, readCsv(l), l.sheet ? `XLSX (лист «${l.sheet}»)` : 'CSV');
        if (!l.sheet) await convertDecimalCommaColumns(conn, l.table);
        details.push({ ...(await describe(conn, l.table)), sheet: l.sheet });
      }
    }
    // Everything into the main file before it is renamed: no WAL may be left beside the temp name.
    await conn.run('CHECKPOINT');
    return details;
  } finally {
    conn?.closeSync();
    instance?.closeSync();
  }
}

function readCsv(l: CsvLoad): string {
  const options = [
    'auto_detect = true',
    // Types from every row, not a sample: a text value on row 900 000 must not break a column typed as number.
    'sample_size = -1',
    l.hasHeader === undefined ? undefined : `header = ${l.hasHeader}`,
    l.delimiter === undefined ? undefined : `delim = ${sqlString(l.delimiter)}`,
    l.nullPadding ? 'null_padding = true' : undefined,
  ].filter(Boolean);
  return `read_csv(${sqlString(l.path)}, ${options.join(', ')})`;
}

async function load(conn: DuckDBConnection, table: string, source: string, what: string): Promise<void> {
  try {
    await conn.run(`CREATE TABLE ${quoteIdent(table)} AS SELECT * FROM ${source}`);
  } catch (err) {
    throw new ConnectorError(`Не удалось прочитать файл ${what}: ${firstLine(errorMessage(err))}`, 'settings', {
      cause: err,
    });
  }
}

async function describe(conn: DuckDBConnection, table: string): Promise<ImportedTable> {
  const cols = await conn.runAndReadAll(
    `SELECT column_name, data_type, is_nullable FROM information_schema.columns
     WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  const count = await conn.runAndReadAll(`SELECT count(*) FROM ${quoteIdent(table)}`);
  const columns = (cols.getRowsJS() as unknown[][]).map((r) => ({
    name: String(r[0]),
    db_type: String(r[1]),
    primitive_type: duckdbCatalogPrimitive(String(r[1])),
    nullable: r[2] === 'YES',
  }));
  if (columns.length === 0) throw new ConnectorError('В файле не найдено ни одного столбца', 'settings');
  return { name: table, row_count: Number(count.getRowsJS()[0][0]), columns };
}

// A number written the Russian way: optional minus, digits grouped by (non-breaking) spaces, decimal comma.
const DECIMAL_COMMA = String.raw`-?\d{1,3}([ \x{00A0}]\d{3})*(,\d+)?|-?\d+(,\d+)?`;

/**
 * Russian CSV exports (Excel, 1C) write 1 234,56: DuckDB's sniffer leaves such columns as text. A text column
 * whose every value is such a number, and at least one has a decimal comma, becomes DOUBLE.
 */
async function convertDecimalCommaColumns(conn: DuckDBConnection, table: string): Promise<void> {
  const cols = await conn.runAndReadAll(
    `SELECT column_name FROM information_schema.columns
     WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $1 AND data_type = 'VARCHAR'`,
    [table],
  );
  for (const [name] of cols.getRowsJS() as [string][]) {
    const col = quoteIdent(name);
    const check = await conn.runAndReadAll(
      `SELECT count(*) FILTER (WHERE ${col} IS NOT NULL AND NOT regexp_full_match(trim(${col}), '${DECIMAL_COMMA}')) = 0
              AND count(*) FILTER (WHERE ${col} LIKE '%,%') > 0
       FROM ${quoteIdent(table)}`,
    );
    if (check.getRowsJS()[0][0] !== true) continue;
    await conn.run(
      `ALTER TABLE ${quoteIdent(table)} ALTER ${col} TYPE DOUBLE
       USING CAST(replace(replace(replace(trim(${col}), ' ', ''), chr(160), ''), ',', '.') AS DOUBLE)`,
    );
  }
}

function uniqueNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((raw) => {
    const base = raw.trim() || 'Лист';
    const key = base.toLowerCase(); // DuckDB identifiers are case-insensitive
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return n === 1 ? base : `${base}_${n}`;
  });
}

function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function firstLine(s: string): string {
  return s.split('\n')[0].slice(0, 500);
}
