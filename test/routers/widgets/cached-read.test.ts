import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetView,
} from './world';

/*
 * A widget read whose answer is cached asks the metadata store nothing: the widget, the caller's role, the dataset's
 * version and sources, the model, the compiled query and the source-access decision are all cached in AppDeps. A
 * save of the widget or the dataset is seen by the very next read.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(20));
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = (
    await createSalesDataset(api, cast.tokens.wsAdmin!, { workspaceId: cast.workspaceId, sourceId: source, tables })
  ).id;
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('a cached widget read', () => {
  it('runs no metadata query, and sees a widget save at once', async () => {
    const body = {
      name: 'w',
      type: 'table',
      dataset_id: datasetId,
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'n', sql: 'COUNT()' }],
    };
    const created = await api.post('/api/widget', body, cast.tokens.editor);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = ok<WidgetView>(created).id as number;
    const read = () => api.post(`/api/widget/${id}/data`, {}, cast.tokens.viewer);
    const first = await read();
    expect(first.status).toBe(200);

    const pool = (t.deps.db as unknown as { $client: pg.Pool }).$client;
    const queries = vi.spyOn(pool, 'query');
    const connects = vi.spyOn(pool, 'connect');
    try {
      const again = await read();
      expect(again.body).toEqual(first.body);
      expect(queries).not.toHaveBeenCalled();
      expect(connects).not.toHaveBeenCalled();
    } finally {
      queries.mockRestore();
      connects.mockRestore();
    }

    const saved = await api.put(
      `/api/widget/${id}`,
      { ...body, columns: [{ id: 'total', sql: 'SUM([sales.qty])' }] },
      cast.tokens.editor,
    );
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const after = await read();
    expect(Object.keys(ok<FlatData>(after).rows[0]).sort()).toEqual(['p', 'total']);
  });
});
