import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSources } from '../../../db/schema/data-sources';
import { datasetSources, datasets } from '../../../db/schema/datasets';
import { createTestApp, useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, rest, type Deleted } from '../../support/rest';
import {
  createSource,
  ok,
  upload,
  type CheckResult,
  type ColumnValues,
  type Preview,
  type QueryView,
  type SourceView,
} from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;
let scratch: string;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  scratch = await mkdtemp(path.join(tmpdir(), 'files-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const SALES = 'id,city,amount,day\n1,Москва,10.5,2024-01-02\n2,Казань,20,2024-02-03\n3,Самара,,2024-03-04\n';
const post = (
  file: { name: string; content: Buffer | string } | undefined,
  fields: Record<string, string> = {},
  token = cast.tokens.editor,
) => upload(api, 'POST', '/api/files', token, file, fields);
const preview = (id: number, table: string, token = cast.tokens.editor) =>
  api.post(`/api/data-source/${id}/preview`, { table }, token);
// The default store (file://DATA_DIR/storage): a source's objects are files/<uuid>/… there; settings name them
// `storage:<key>`.
const storedRoot = () => path.join(t.deps.config.dataDir, 'storage');
const storedFile = (ref: string) => path.join(storedRoot(), ref.replace(/^storage:/, ''));
/** How many objects a source has in storage (local disk may keep an empty folder behind). */
const storedObjects = async (uuid: string) => {
  let n = 0;
  for await (const _ of t.deps.storage.list(`files/${uuid}/`)) n++;
  return n;
};
const storedSources = () => readdir(path.join(storedRoot(), 'files')).catch(() => [] as string[]);

async function xlsx(sheets: Record<string, unknown[][]>): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) wb.addWorksheet(name).addRows(rows);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

describe('POST /api/files', () => {
  it('uploads a CSV as a file source in the personal workspace, imported into DuckDB, both stored under files/<uuid>/', async () => {
    const res = await post({ name: 'Продажи 2024.csv', content: SALES });
    const src = ok<SourceView>(res);
    expect(src).toMatchObject({
      name: 'Продажи 2024',
      type: 'file',
      type_name: 'Файл',
      workspace_id: cast.users.editor.personalWorkspaceId,
      can_edit: true,
      settings: {
        file: {
          tables: ['Продажи_2024'],
          original_name: 'Продажи 2024.csv',
          format: 'csv',
          row_count: 3,
          size_bytes: Buffer.byteLength(SALES),
        },
      },
    });
    // where the files lie is not shown; in the database the settings name the storage keys
    expect(JSON.stringify(res.body)).not.toMatch(/duckdb_path|stored_file|\/tmp\//);
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));
    const settings = row.settings as { file: { duckdb_path: string }; upload: { stored_file: string } };
    expect(settings.file.duckdb_path).toMatch(new RegExp(`^storage:files/${src.uuid}/[\\w-]+\\.duckdb$`));
    expect(existsSync(storedFile(settings.file.duckdb_path))).toBe(true);
    expect(await readFile(storedFile(settings.upload.stored_file), 'utf8')).toBe(SALES);

    const rows = ok<Preview>(await preview(src.id, 'Продажи_2024'));
    expect(rows.schema).toBe('main');
    expect(rows.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
      ['day', 'date'],
    ]);
    expect(rows.rows).toEqual([
      [1, 'Москва', 10.5, '2024-01-02'],
      [2, 'Казань', 20, '2024-02-03'],
      [3, 'Самара', null, '2024-03-04'],
    ]);
    const values = ok<ColumnValues>(
      await api.get(`/api/data-source/${src.id}/column-values`, cast.tokens.editor, {
        table: 'Продажи_2024',
        column: 'city',
        query: 'сам',
      }),
    );
    expect(values.values).toEqual(['Самара']);
  });

  it('takes the name, workspace, delimiter and header flag from the form; reads windows-1251', async () => {
    const text = 'Город;Сумма\r\nМосква;1 234,50\r\nКазань;99,9\r\n';
    const src = ok<SourceView>(
      await post(
        { name: 'cp1251.csv', content: iconv.encode(text, 'windows-1251') },
        { name: 'Выгрузка 1С', workspace_id: String(cast.workspaceId), delimiter: ';', has_header: 'true' },
      ),
    );
    expect(src).toMatchObject({
      name: 'Выгрузка 1С',
      workspace_id: cast.workspaceId,
      settings: { file: { delimiter: ';', has_header: true } },
    });
    const rows = ok<Preview>(await preview(src.id, 'cp1251'));
    expect(rows.columns.map((c) => [c.name, c.primitive_type])).toEqual([
      ['Город', 'string'],
      ['Сумма', 'float'],
    ]);
    expect(rows.rows).toEqual([
      ['Москва', 1234.5],
      ['Казань', 99.9],
    ]);
    const noHeader = ok<SourceView>(
      await post({ name: 'raw.csv', content: '1,a\n2,b\n' }, { has_header: 'false', delimiter: 'comma' }),
    );
    expect(ok<Preview>(await preview(noHeader.id, 'raw')).columns).toHaveLength(2);
  });

  it('imports every non-empty sheet of an XLSX as a table, or the one sheet asked for', async () => {
    const book = await xlsx({
      Продажи: [
        ['id', 'сумма'],
        [1, 10],
        [2, 20],
      ],
      Пусто: [],
      Планы: [
        ['месяц', 'план'],
        ['январь', 5],
      ],
    });
    const all = ok<SourceView>(await post({ name: 'book.xlsx', content: book }));
    expect(all.settings.file).toMatchObject({ tables: ['Продажи', 'Планы'], format: 'xlsx', row_count: 3 });
    expect(ok<Preview>(await preview(all.id, 'Планы')).rows).toEqual([['январь', 5]]);
    const one = ok<SourceView>(await post({ name: 'book.xlsx', content: book }, { sheet: 'Планы' }));
    expect(one.settings.file!.tables).toEqual(['book']);
    const missing = await post({ name: 'book.xlsx', content: book }, { sheet: 'Нет такого' });
    expect(missing.status).toBe(422);
    expect(failure(missing).message).toBe('В файле нет листа «Нет такого»');
  });

  it('imports Parquet', async () => {
    const file = path.join(scratch, 'points.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`COPY (SELECT range AS id, 'p' || range AS label FROM range(5)) TO '${file}' (FORMAT PARQUET)`);
    c.closeSync();
    db.closeSync();
    const src = ok<SourceView>(await post({ name: 'points.parquet', content: await readFile(file) }));
    expect(src.settings.file).toMatchObject({ format: 'parquet', row_count: 5, tables: ['points'] });
    expect(ok<Preview>(await preview(src.id, 'points')).rows[4]).toEqual([4, 'p4']);
  });

  it('refuses broken and unsupported files with 422 and a clear message, leaving nothing behind', async () => {
    const before = (await storedSources()).sort();
    const cases: [string, Buffer | string, RegExp][] = [
      ['broken.xlsx', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(200, 7)]), /XLSX/],
      ['old.xls', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]), /XLS/],
      ['report.pdf', '%PDF-1.4 something', /CSV, XLSX или Parquet/],
      ['empty.csv', '', /пуст/],
      ['binary.csv', Buffer.from([0x41, 0x00, 0x42, 0x00, 0x01, 0x02, 0x03]), /двоичные/],
      ['broken.parquet', 'PAR1 not really parquet', /Parquet/],
    ];
    for (const [name, content, message] of cases) {
      const res = await post({ name, content });
      expect(res.status, name).toBe(422);
      expect(failure(res).message, name).toMatch(message);
      expect(failure(res).errors!.file, name).toBe(failure(res).message);
    }
    expect((await storedSources()).sort()).toEqual(before);
    expect(await readdir(path.join(t.deps.config.dataDir, 'files', '.incoming'))).toEqual([]);
  });

  it('answers bad requests in the envelope: 401 first, 415 for the wrong content type, 422 for bad fields', async () => {
    expect((await upload(api, 'POST', '/api/files', undefined, { name: 'a.csv', content: SALES })).status).toBe(401);
    expect(
      (await api.call('POST', '/api/files', { body: 'x', headers: { 'content-type': 'multipart/form-data' } })).status,
    ).toBe(401);
    const json = await api.post('/api/files', { file: 'a,b' }, cast.tokens.editor);
    expect(json.status).toBe(415);
    expect(failure(json)).toMatchObject({
      code: 415,
      message: 'Ожидается тело multipart/form-data с файлом в поле file',
    });
    expect(
      (
        await api.call('POST', '/api/files', {
          token: cast.tokens.editor,
          body: 'a,b',
          headers: { 'content-type': 'text/csv' },
        })
      ).status,
    ).toBe(415);
    const noBoundary = await api.call('POST', '/api/files', {
      token: cast.tokens.editor,
      body: 'x',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.body.success).toBe(false);
    const noFile = await post(undefined, { name: 'x' });
    expect(noFile.status).toBe(422);
    expect(failure(noFile).errors).toEqual({ file: 'must not be null' });
    const fields = await post(
      { name: 'a.csv', content: SALES },
      { has_header: 'maybe', workspace_id: 'abc', colour: 'red', delimiter: '<<<<<' },
    );
    expect(fields.status).toBe(422);
    expect(failure(fields).errors).toEqual({
      hasHeader: 'must be true or false',
      workspaceId: 'must be an integer',
      colour: 'unknown field',
      delimiter: 'must be 1 to 4 characters',
    });
    const wrongField = await upload(api, 'POST', '/api/files', cast.tokens.editor, undefined, {});
    expect(wrongField.status).toBe(422);
  });

  it('needs an editing role in the target workspace', async () => {
    const file = { name: 'a.csv', content: SALES };
    expect((await post(file, { workspace_id: String(cast.workspaceId) }, cast.tokens.plain)).status).toBe(404);
    expect((await post(file, { workspace_id: String(cast.workspaceId) }, cast.tokens.viewer)).status).toBe(403);
    expect((await post(file, { workspace_id: String(cast.workspaceId) }, cast.tokens.wsAdmin)).status).toBe(200);
  });

  it('refuses a file over the upload limit with 413', async () => {
    const small = await createTestApp({ UPLOAD_LIMIT_BYTES: '1024' });
    try {
      const a = rest(small.app);
      const cast2 = await createRoleCast(small.deps, a);
      const big = await upload(a, 'POST', '/api/files', cast2.tokens.editor, {
        name: 'big.csv',
        content: 'x,y\n'.repeat(2000),
      });
      expect(big.status).toBe(413);
      expect(failure(big)).toMatchObject({ code: 413, message: 'Файл больше допустимого размера 1 КБ' });
      const fits = await upload(a, 'POST', '/api/files', cast2.tokens.editor, {
        name: 'ok.csv',
        content: 'x,y\n1,2\n',
      });
      expect(fits.status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe('PUT /api/files/{id}', () => {
  it('replaces the file keeping the id, the table name and the dependants', async () => {
    const src = ok<SourceView>(
      await post({ name: 'plan.csv', content: 'month,plan\njan,1\n' }, { workspace_id: String(cast.workspaceId) }),
    );
    const [ds] = await t.deps.db.insert(datasets).values({ name: 'План', workspaceId: cast.workspaceId }).returning();
    await t.deps.db.insert(datasetSources).values({ datasetId: ds.id, dataSourceId: src.id });
    ok(await api.get(`/api/data-source/${src.id}/tables`, cast.tokens.editor)); // fills the metadata cache
    const [before] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, src.id));

    const url = `/api/files/${src.id}`;
    const file = { name: 'plan-v2.csv', content: 'month,plan\njan,1\nfeb,2\nmar,3\n' };
    expect((await upload(api, 'PUT', url, cast.tokens.viewer, file)).status).toBe(403);
    expect((await upload(api, 'PUT', url, cast.tokens.plain, file)).status).toBe(404);
    expect((await upload(api, 'PUT', url, undefined, file)).status).toBe(401);
    const replaced = ok<SourceView>(await upload(api, 'PUT', url, cast.tokens.editor, file));
    expect(replaced).toMatchObject({
      id: src.id,
      uuid: src.uuid,
      settings: { file: { tables: ['plan'], original_name: 'plan-v2.csv', row_count: 3 } },
    });
    expect(Date.parse(replaced.updated_at)).toBeGreaterThan(Date.parse(src.updated_at));
    expect(ok<Preview>(await preview(src.id, 'plan')).rows).toEqual([
      ['jan', 1],
      ['feb', 2],
      ['mar', 3],
    ]);
    const [links] = await t.deps.db.select().from(datasetSources).where(eq(datasetSources.dataSourceId, src.id));
    expect(links.datasetId).toBe(ds.id);
    // the old files are gone, the new ones are in the same folder
    const old = before.settings as { file: { duckdb_path: string } };
    expect(existsSync(storedFile(old.file.duckdb_path))).toBe(false);
    expect(await storedObjects(src.uuid)).toBe(2);

    const broken = await upload(api, 'PUT', url, cast.tokens.editor, { name: 'x.xlsx', content: 'PK\x03\x04 nope' });
    expect(broken.status).toBe(422);
    expect(ok<Preview>(await preview(src.id, 'plan')).rows).toHaveLength(3); // still the last good file
    const pg = await createSource(api, cast.tokens.editor, 'postgresql', { workspace_id: cast.workspaceId });
    expect((await upload(api, 'PUT', `/api/files/${pg.id}`, cast.tokens.editor, file)).status).toBe(400);
    expect((await upload(api, 'PUT', '/api/files/abc', cast.tokens.editor, file)).status).toBe(422);

    await t.deps.db.delete(datasets).where(eq(datasets.id, ds.id));
  });
});

describe('DELETE /api/files/{id} and copies of file sources', () => {
  it('copies the file with the source, deletes a source with its folder, 400 while datasets depend on it', async () => {
    const src = ok<SourceView>(
      await post({ name: 'cities.csv', content: SALES }, { workspace_id: String(cast.workspaceId) }),
    );
    const copy = ok<SourceView>(await api.post(`/api/data-source/${src.id}/copy`, {}, cast.tokens.editor));
    expect(await storedObjects(copy.uuid)).toBe(2);
    expect(copy.settings.file!.tables).toEqual(['cities']);

    const [ds] = await t.deps.db.insert(datasets).values({ name: 'Города', workspaceId: cast.workspaceId }).returning();
    await t.deps.db.insert(datasetSources).values({ datasetId: ds.id, dataSourceId: src.id });
    const blocked = await api.delete(`/api/files/${src.id}`, cast.tokens.editor);
    expect(blocked.status).toBe(400);
    expect(failure(blocked).message).toMatch(/датасеты/);
    await t.deps.db.delete(datasets).where(eq(datasets.id, ds.id));

    expect((await api.delete(`/api/files/${src.id}`, cast.tokens.viewer)).status).toBe(403);
    expect((await api.delete(`/api/files/${src.id}`)).status).toBe(401);
    expect(ok<Deleted>(await api.delete(`/api/files/${src.id}`, cast.tokens.editor))).toEqual({
      id: src.id,
      deleted: true,
    });
    expect(await storedObjects(src.uuid)).toBe(0);
    expect((await api.delete(`/api/files/${src.id}`, cast.tokens.editor)).status).toBe(404);
    // the copy has files of its own
    expect(ok<Preview>(await preview(copy.id, 'cities')).rows).toHaveLength(3);
    // DELETE /api/data-source removes a file source's folder too
    ok(await api.delete(`/api/data-source/${copy.id}`, cast.tokens.editor));
    expect(await storedObjects(copy.uuid)).toBe(0);

    const pg = await createSource(api, cast.tokens.editor, 'postgresql', { workspace_id: cast.workspaceId });
    expect((await api.delete(`/api/files/${pg.id}`, cast.tokens.editor)).status).toBe(400);
  });
});

describe('SQL on a file source', () => {
  it('checks and renames like any source, and runs SQL in DuckDB without access to the server file system', async () => {
    const src = ok<SourceView>(await post({ name: 'sales.csv', content: SALES }));
    expect(ok<CheckResult>(await api.post(`/api/data-source/${src.id}/check`, undefined, cast.tokens.editor))).toEqual({
      ok: true,
      message: 'Подключение успешно',
    });
    expect(
      (await api.post(`/api/data-source/${src.id}/check`, { settings: { host: 'x' } }, cast.tokens.editor)).status,
    ).toBe(422);
    expect((await api.put(`/api/data-source/${src.id}`, { settings: { host: 'x' } }, cast.tokens.editor)).status).toBe(
      400,
    );
    expect(
      ok<SourceView>(await api.put(`/api/data-source/${src.id}`, { name: 'Продажи (файл)' }, cast.tokens.editor)).name,
    ).toBe('Продажи (файл)');
    const q = ok<QueryView>(
      await api.post(
        `/api/data-source/${src.id}/queries`,
        { sql: 'SELECT city FROM sales WHERE amount > $1', parameters: [15] },
        cast.tokens.editor,
      ),
    );
    expect(q.rows).toEqual([['Казань']]);
    for (const sql of [
      `SELECT * FROM read_csv('/etc/passwd')`,
      `COPY sales TO '/tmp/leak.csv'`,
      `ATTACH '/tmp/x.duckdb'`,
    ]) {
      const res = await api.post(`/api/data-source/${src.id}/queries`, { sql }, cast.tokens.editor);
      expect(res.status, sql).toBe(400);
      expect(failure(res).message, sql).toMatch(/disabled by configuration|read-only|Permission/i);
    }
  });
});
