import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { dataSourceAccessLog, dataSourceMetadata } from '../../../db/schema/data-sources';
import { useTestApp } from '../../support/app';
import { failure } from '../../support/rest';
import { createRoleCast, type RoleCast } from '../../support/factories';
import {
  DB_KINDS,
  TEST_SCHEMA,
  createCitiesTable,
  createSource,
  dropTable,
  ok,
  randomName,
  type ColumnList,
  type ColumnValues,
  type DbKind,
  type DependentObjects,
  type MetadataRefresh,
  type Preview,
  type SchemaList,
  type TableList,
} from './helpers';

const { t, api } = useTestApp();
let cast: RoleCast;
const tables: [DbKind, string][] = [];

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
});
afterAll(async () => {
  await Promise.all(tables.map(([kind, name]) => dropTable(kind, name)));
});

describe.each(DB_KINDS)('metadata and data of a %s source', (kind) => {
  // A name that must be quoted everywhere: spaces, a double quote, Cyrillic.
  const table = `${randomName('cities')} "Города" x`;
  const schema = TEST_SCHEMA[kind];
  let id: number;
  let base: string;

  beforeAll(async () => {
    await createCitiesTable(kind, table);
    tables.push([kind, table]);
    id = (await createSource(api, cast.tokens.editor, kind, { workspace_id: cast.workspaceId })).id;
    base = `/api/data-source/${id}`;
  });

  it('lists schemas, tables and columns (cached after the first read)', async () => {
    // The Администратор of the workspace, not the source's author: the raw level is enough.
    const schemas = ok<SchemaList>(await api.get(`${base}/schemas`, cast.tokens.wsAdmin));
    expect(schemas.content).toContain(schema);
    const found = ok<TableList>(
      await api.get(`${base}/tables`, cast.tokens.wsAdmin, { schema, query: table.slice(0, 14).toUpperCase() }),
    );
    expect(found.content).toEqual([{ schema, name: table, kind: 'table' }]);
    // without schema: the kind's default schema
    expect(ok<TableList>(await api.get(`${base}/tables`, cast.tokens.wsAdmin, { query: table })).content).toHaveLength(
      1,
    );
    const columns = ok<ColumnList>(await api.get(`${base}/columns`, cast.tokens.wsAdmin, { schema, table }));
    expect(columns.content.map((c) => [c.name, c.primitive_type])).toEqual([
      ['id', 'integer'],
      ['city', 'string'],
      ['amount', 'float'],
    ]);
    expect(columns.content[0]).toMatchObject({ db_type: expect.any(String), nullable: expect.any(Boolean) });
    const cached = await t.deps.db.select().from(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, id));
    expect(cached.map((c) => c.cacheKey).sort()).toEqual(
      ['columns:' + JSON.stringify([schema, table]), 'schemas', 'tables:' + JSON.stringify([schema])].sort(),
    );
  });

  it('previews the first rows with quoted names (default 100, at most 1000)', async () => {
    const all = ok<Preview>(await api.post(`${base}/preview`, { schema, table }, cast.tokens.editor));
    expect(all).toMatchObject({ schema, table, limit: 100, truncated: false });
    expect(all.columns.map((c) => c.name)).toEqual(['id', 'city', 'amount']);
    expect([...all.rows].sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual([
      [1, 'Москва', 10.5],
      [2, 'Казань', 20],
      [3, 'Самара', null],
    ]);
    const two = ok<Preview>(await api.post(`${base}/preview`, { schema, table, limit: 2 }, cast.tokens.editor));
    expect(two.rows).toHaveLength(2);
    expect(two.truncated).toBe(true);
    expect((await api.post(`${base}/preview`, { schema, table, limit: 1001 }, cast.tokens.editor)).status).toBe(422);
    expect((await api.post(`${base}/preview`, { schema, table, limit: 0 }, cast.tokens.editor)).status).toBe(422);
  });

  it('gives distinct column values, searched case-insensitively', async () => {
    const all = ok<ColumnValues>(
      await api.get(`${base}/column-values`, cast.tokens.editor, { schema, table, column: 'city' }),
    );
    expect(all).toEqual({ column: 'city', values: ['Казань', 'Москва', 'Самара'], truncated: false });
    const searched = ok<ColumnValues>(
      await api.get(`${base}/column-values`, cast.tokens.editor, { schema, table, column: 'city', query: 'КА' }),
    );
    expect(searched.values).toEqual(['Казань']);
    const quote = ok<ColumnValues>(
      await api.get(`${base}/column-values`, cast.tokens.editor, {
        schema,
        table,
        column: 'city',
        query: `'; DROP TABLE x; --`,
      }),
    );
    expect(quote.values).toEqual([]);
    const one = ok<ColumnValues>(
      await api.get(`${base}/column-values`, cast.tokens.editor, { schema, table, column: 'amount', limit: '1' }),
    );
    expect(one).toEqual({ column: 'amount', values: [10.5], truncated: true });
  });

  it('refuses names the source does not have: 404 for schema and table, 422 for a column', async () => {
    const noTable = await api.post(`${base}/preview`, { schema, table: `${table}; DROP TABLE x` }, cast.tokens.editor);
    expect(noTable.status).toBe(404);
    expect(failure(noTable).message).toMatch(/^Таблица не найдена/);
    expect((await api.post(`${base}/preview`, { schema: 'no_such_schema_x', table }, cast.tokens.editor)).status).toBe(
      404,
    );
    expect((await api.get(`${base}/columns`, cast.tokens.editor, { schema, table: 'no_such_table' })).status).toBe(404);
    const noColumn = await api.get(`${base}/column-values`, cast.tokens.editor, {
      schema,
      table,
      column: 'city" FROM x --',
    });
    expect(noColumn.status).toBe(422);
    expect(failure(noColumn).errors).toEqual({ column: `no such column in ${schema}.${table}` });
    expect((await api.get(`${base}/columns`, cast.tokens.editor, { schema })).status).toBe(422);
  });

  it('is for readers of the workspace; raw rows are for editors; refreshing the cache is for owners', async () => {
    expect((await api.get(`${base}/schemas`)).status).toBe(401);
    expect((await api.get(`${base}/schemas`, cast.tokens.plain)).status).toBe(404);
    expect((await api.post(`${base}/preview`, { schema, table }, cast.tokens.plain)).status).toBe(404);
    // The schema lists every column, those a dataset's CLS rule hides from the Наблюдатель included: raw level too.
    for (const [path, query] of [
      ['schemas', {}],
      ['tables', { schema }],
      ['columns', { schema, table }],
    ] as const) {
      const refused = await api.get(`${base}/${path}`, cast.tokens.viewer, query);
      expect(refused.status, path).toBe(403);
      expect(failure(refused).message, path).toBe('Доступ запрещён');
      expect((await api.get(`${base}/${path}`, cast.tokens.editor, query)).status, path).toBe(200);
    }
    // Rows read outside any dataset escape its RLS and CLS: a Наблюдатель reads through datasets only.
    const viewerPreview = await api.post(`${base}/preview`, { schema, table }, cast.tokens.viewer);
    expect(viewerPreview.status).toBe(403);
    expect(failure(viewerPreview).message).toBe('Доступ запрещён');
    const viewerValues = await api.get(`${base}/column-values`, cast.tokens.viewer, { schema, table, column: 'city' });
    expect(viewerValues.status).toBe(403);
    expect(ok<Preview>(await api.post(`${base}/preview`, { schema, table }, cast.tokens.wsAdmin)).rows).toHaveLength(3);
    expect((await api.post(`${base}/metadata/refresh`, undefined, cast.tokens.viewer)).status).toBe(403);
    const refreshed = ok<MetadataRefresh>(await api.post(`${base}/metadata/refresh`, undefined, cast.tokens.wsAdmin));
    expect(refreshed.schemas).toContain(schema);
    const left = await t.deps.db.select().from(dataSourceMetadata).where(eq(dataSourceMetadata.dataSourceId, id));
    expect(left.map((c) => c.cacheKey)).toEqual(['schemas']);
    const reads = await t.deps.db
      .select()
      .from(dataSourceAccessLog)
      .where(and(eq(dataSourceAccessLog.dataSourceId, id), eq(dataSourceAccessLog.action, 'read')));
    expect(reads.length).toBeGreaterThanOrEqual(8);
    expect(reads.some((r) => r.userId === cast.users.editor.id && r.detail.startsWith('просмотр'))).toBe(true);
  });

  it('reports a dropped table in the driver words, and forgets it after a refresh', async () => {
    const gone = `${randomName('gone')}`;
    await createCitiesTable(kind, gone);
    tables.push([kind, gone]);
    expect(
      ok<Preview>(await api.post(`${base}/preview`, { schema, table: gone }, cast.tokens.editor)).rows,
    ).toHaveLength(3);
    await dropTable(kind, gone);
    const stale = await api.post(`${base}/preview`, { schema, table: gone }, cast.tokens.editor);
    expect(stale.status).toBe(400);
    expect(failure(stale).message).toContain(gone);
    ok<MetadataRefresh>(await api.post(`${base}/metadata/refresh`, undefined, cast.tokens.editor));
    expect((await api.post(`${base}/preview`, { schema, table: gone }, cast.tokens.editor)).status).toBe(404);
  });

  it('lists the objects built on the source (none yet)', async () => {
    expect(ok<DependentObjects>(await api.get(`${base}/objects`, cast.tokens.viewer))).toEqual({
      content: [],
      hidden_count: 0,
    });
    expect((await api.get(`${base}/objects`, cast.tokens.plain)).status).toBe(404);
  });
});

describe('a source that cannot be reached', () => {
  it('answers metadata and preview calls with 400 and the driver message', async () => {
    const src = await createSource(api, cast.tokens.editor, 'mysql', {
      workspace_id: cast.workspaceId,
      settings: { password: 'wrong-password-x', username: 'nobody_here' },
    });
    const res = await api.get(`/api/data-source/${src.id}/schemas`, cast.tokens.editor);
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/Access denied/);
    expect(JSON.stringify(res.body)).not.toContain('wrong-password-x');
  });
});
