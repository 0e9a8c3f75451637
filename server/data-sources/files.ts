import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { ConnectorError, importFile, type ImportFileResult, type ImportFormat } from '../../adapters/sources';
import { assertWorkspaceEditable, defaultWorkspaceFor } from '../access/workspace-access';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { readCachesChanged } from '../kernel/read-epoch';
import { badRequest, invalid } from '../kernel/errors';
import { assertKindEnabled } from '../admin/source-types';
import { ownedObject } from '../access/object-access';
import { logSourceAccess } from './access-log';
import { deleteDataSource } from './data-sources';
import { importWorkDir, newImportId, removeFileSourceFiles, removeFiles, storeSourceFile } from './file-storage';
import { insertSource, updateSource } from './store';
import { recordRevisions } from '../revisions/store';
import { authorOf, dataSourceView, type DataSourceView } from './views';

/** A file the upload route has streamed to the staging folder. */
export interface UploadedFile {
  path: string;
  filename: string;
  size: number;
}

export interface FileImportOptions {
  sheet?: string;
  has_header?: boolean;
  delimiter?: string;
}

/** What a file source keeps about its upload, beside the DuckDB path and tables the connector reads. */
export interface UploadInfo extends FileImportOptions {
  original_name: string;
  format: ImportFormat;
  size_bytes: number;
  row_count: number;
  stored_file: string;
  uploaded_at: string;
  table_details: { name: string; sheet?: string; row_count: number; column_count: number }[];
}

interface FileSettings {
  file: { duckdb_path: string; tables: string[] };
  upload: UploadInfo;
}

const UNSUPPORTED = 'Формат файла не поддерживается: загрузите CSV, XLSX или Parquet';

/** A broken or unsupported file is a 422 whose message says what is wrong with it. */
const badFile = (message: string) => invalid({ file: message }, message);

/** CSV, XLSX or Parquet, from the first bytes first (a renamed file still imports) and the extension second. */
async function detectFormat(file: UploadedFile): Promise<ImportFormat> {
  const fh = await open(file.path, 'r');
  const head = Buffer.alloc(8);
  try {
    await fh.read(head, 0, 8, 0);
  } finally {
    await fh.close();
  }
  if (file.size === 0) throw badFile('Файл пуст');
  const ext = path.extname(file.filename).toLowerCase().replace(/^\./, '');
  if (head.subarray(0, 4).equals(Buffer.from('PAR1'))) return 'parquet';
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return 'xlsx';
  if (head.equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))) {
    throw badFile('Формат XLS (Excel 97–2003) не поддерживается: сохраните книгу как XLSX или CSV');
  }
  if (['xlsx', 'xlsm'].includes(ext)) return 'xlsx';
  if (ext === 'parquet') return 'parquet';
  if (['csv', 'tsv', 'txt', ''].includes(ext)) return 'csv';
  throw badFile(UNSUPPORTED);
}

/** A readable table name from the file name: letters, digits and _, at most 63 characters. */
export function tableNameFor(filename: string): string {
  const base = path.basename(filename, path.extname(filename));
  const name = base
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}_]+/gu, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 63);
  if (!name) return 'data';
  return /^\p{N}/u.test(name) ? `t_${name}`.slice(0, 63) : name;
}

async function runImport(input: Parameters<typeof importFile>[0]): Promise<ImportFileResult> {
  try {
    return await importFile(input);
  } catch (err) {
    if (err instanceof ConnectorError) throw badFile(err.message);
    throw err;
  }
}

/**
 * Imports the staged upload in a work folder of its own, then puts the file and its DuckDB database in storage under
 * new keys (file-storage.ts); the work folder goes either way.
 */
async function importInto(
  deps: AppDeps,
  uuid: string,
  file: UploadedFile,
  format: ImportFormat,
  options: FileImportOptions,
  tableName: string,
): Promise<FileSettings> {
  const importId = newImportId();
  const dir = await importWorkDir(deps, importId);
  const fileName = `source-${importId}${format === 'csv' ? path.extname(file.filename).toLowerCase() || '.csv' : `.${format}`}`;
  const localFile = path.join(dir, fileName);
  const localDb = path.join(dir, `${importId}.duckdb`);
  const stored: string[] = [];
  try {
    await rename(file.path, localFile);
    const result = await runImport({
      input_path: localFile,
      format,
      sheet: options.sheet,
      has_header: options.has_header,
      delimiter: options.delimiter,
      duckdb_path: localDb,
      table_name: tableName,
    });
    stored.push(await storeSourceFile(deps, uuid, fileName, localFile));
    stored.push(await storeSourceFile(deps, uuid, `${importId}.duckdb`, localDb));
    const [storedFile, duckdbPath] = stored;
    return {
      file: { duckdb_path: duckdbPath, tables: result.tables },
      upload: {
        original_name: file.filename,
        format,
        size_bytes: file.size,
        row_count: result.row_count,
        stored_file: storedFile,
        uploaded_at: new Date().toISOString(),
        ...options,
        table_details: result.details.map((d) => ({
          name: d.name,
          sheet: d.sheet,
          row_count: d.row_count,
          column_count: d.columns.length,
        })),
      },
    };
  } catch (err) {
    await removeFiles(deps, stored);
    throw err;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** POST /api/files: a new file source from an upload. Nothing is left behind when any step fails. */
export async function uploadFileSource(
  deps: AppDeps,
  actor: Actor,
  file: UploadedFile,
  input: FileImportOptions & { name?: string; workspace_id?: number },
): Promise<DataSourceView> {
  const workspaceId = input.workspace_id ?? (await defaultWorkspaceFor(deps.db, actor));
  await assertWorkspaceEditable(deps.db, actor, workspaceId);
  await assertKindEnabled(deps, 'file');
  const format = await detectFormat(file);
  const uuid = randomUUID();
  const { name, workspace_id: _ws, ...options } = input;
  try {
    const settings = await importInto(deps, uuid, file, format, options, tableNameFor(file.filename));
    const row = await deps.db.transaction(async (tx) => {
      const created = await insertSource(tx, {
        uuid,
        name: name ?? (path.basename(file.filename, path.extname(file.filename)) || file.filename),
        type: 'file',
        workspaceId,
        authorId: actor.userId,
        settings,
      });
      await logSourceAccess(tx, created.id, actor, 'edit', `загрузка файла ${file.filename}`);
      await recordRevisions(tx, 'data_source', [created.id], 'created', actor.userId);
      return created;
    });
    return dataSourceView(deps, row, { id: actor.userId, username: actor.username }, true);
  } catch (err) {
    await removeFileSourceFiles(deps, uuid);
    throw err;
  }
}

/**
 * PUT /api/files/{id}: a new file for an existing file source. The source keeps its id, uuid and dependents; a
 * single-table file keeps the table name, so datasets on it keep working when the columns do. The new file is
 * imported beside the old one; one transaction switches the source over; the old files go after the commit.
 */
export async function replaceFileSource(
  deps: AppDeps,
  actor: Actor,
  id: number,
  file: UploadedFile,
  options: FileImportOptions,
): Promise<DataSourceView> {
  const { row } = await ownedObject(deps.db, actor, 'data_source', id);
  if (row.type !== 'file')
    throw badRequest('Источник не является файловым: файл можно заменить только у файлового источника');
  const format = await detectFormat(file);
  const previous = row.settings as Partial<FileSettings>;
  const keep = (key: keyof FileImportOptions) =>
    format === previous.upload?.format ? previous.upload?.[key] : undefined;
  const merged: FileImportOptions = {
    sheet: options.sheet ?? (keep('sheet') as string | undefined),
    has_header: options.has_header ?? (keep('has_header') as boolean | undefined),
    delimiter: options.delimiter ?? (keep('delimiter') as string | undefined),
  };
  for (const k of Object.keys(merged) as (keyof FileImportOptions)[]) if (merged[k] === undefined) delete merged[k];
  const tableName = previous.file?.tables?.length === 1 ? previous.file.tables[0] : tableNameFor(file.filename);
  const settings = await importInto(deps, row.uuid, file, format, merged, tableName);

  let replaced: Partial<FileSettings>;
  let updated;
  try {
    ({ replaced, updated } = await deps.db.transaction(async (tx) => {
      const { row: locked } = await ownedObject(tx, actor, 'data_source', id, { forUpdate: true });
      // New settings: the store drops the metadata read from the old file.
      const saved = await updateSource(tx, id, { settings });
      await logSourceAccess(tx, id, actor, 'edit', `замена файла: ${file.filename}`);
      await recordRevisions(tx, 'data_source', [id], 'saved', actor.userId);
      return { replaced: locked.settings as Partial<FileSettings>, updated: saved };
    }));
  } catch (err) {
    await removeFiles(deps, [settings.file.duckdb_path, settings.upload.stored_file]);
    throw err;
  }
  readCachesChanged(deps); // widget reads cache the source row: the next read takes the new file
  await deps.connectors.release(id).catch(() => undefined);
  await removeFiles(deps, [replaced.file?.duckdb_path, replaced.upload?.stored_file]);
  return dataSourceView(deps, updated, await authorOf(deps.db, updated.authorId), true);
}

/** DELETE /api/files/{id}: the source and its folder. */
export function deleteFileSource(deps: AppDeps, actor: Actor, id: number) {
  return deleteDataSource(deps, actor, id, { onlyKind: 'file' });
}
