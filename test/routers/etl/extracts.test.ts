import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetView,
} from '../widgets/world';
import { materialise, runExtract, type HistoryPage, type RunPage, type RunView } from './world';

/*
 * Extracts over REST with a real PostgreSQL source: POST/GET /api/datasets/{id}/extracts, GET /api/etl-jobs/{jobId}
 * and its history. The same widgets read a live dataset and its materialised twin over the same tables: the answers
 * are the same, with row- and column-level security applied to both.
 */

const SALES = makeSales(90);
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let live: { id: number; fieldId: (name: string) => number };
let mat: { id: number; fieldId: (name: string) => number };
const owner = () => cast.tokens.wsAdmin!;

const WIDGETS: Record<string, Record<string, unknown>> = {
  byProduct: {
    type: 'table',
    rows: [{ id: 'p', sql: '[sales.product]' }],
    columns: [
      { id: 'q', sql: 'SUM([sales.qty])' },
      { id: 'a', sql: 'SUM([sales.amount])' },
      { id: 'n', sql: 'COUNT([sales.id])' },
    ],
    sorts: [{ field_id: 'p', direction: 'asc' }],
  },
  byRegionYear: {
    type: 'table',
    rows: [
      { id: 'r', sql: '[regions.name]' },
      { id: 'y', sql: 'YEAR([sales.sold_on])' },
    ],
    columns: [
      { id: 'rev', sql: 'SUM([sales.amount])' },
      { id: 'mx', sql: 'MAX([sales.amount])' },
    ],
    sorts: [{ field_id: 'r', direction: 'asc' }],
  },
  details: {
    type: 'table',
    rows: [
      { id: 'id', sql: '[sales.id]' },
      { id: 'p', sql: '[sales.product]' },
      { id: 'q', sql: '[sales.qty]' },
      { id: 'd', sql: '[sales.sold_on]' },
      { id: 'a', sql: '[sales.amount]' },
    ],
    columns: [],
    filters: [{ sql: '[sales.region_id]', op: 'in', values: [1, 2] }],
    sorts: [{ field_id: 'id', direction: 'asc' }],
  },
};

async function widgetOn(datasetId: number, config: Record<string, unknown>): Promise<number> {
  return ok<WidgetView>(await api.post('/api/widget', { name: 'w', dataset_id: datasetId, ...config }, owner())).id;
}
async function rowsOf(widgetId: number, token: string) {
  return ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, { page_size: 1000 }, token)).rows;
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const opts = { workspaceId: cast.workspaceId, sourceId: source, tables };
  live = await createSalesDataset(api, owner(), opts);
  mat = await createSalesDataset(api, owner(), opts);
  await materialise(api, owner(), mat.id);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('a materialised dataset answers from its extract', () => {
  it('before the first synchronisation a data request is a 400 saying one is needed', async () => {
    const w = await widgetOn(mat.id, WIDGETS.byProduct);
    for (const res of [
      await api.post(`/api/widget/${w}/data`, {}, owner()),
      await api.post(`/api/dataset/${mat.id}/preview`, {}, owner()),
    ]) {
      expect(res.status).toBe(400);
      expect(failure(res).message).toMatch(/первая синхронизация/);
    }
  });

  it('a run goes queued -> running -> succeeded, counts its rows, logs its steps and notifies its user', async () => {
    const before = ok<{ count: number }>(await api.get('/api/notifications/unread-count', owner())).count;
    const run = await runExtract(api, owner(), mat.id);
    expect(run).toMatchObject({ dataset_id: mat.id, mode: 'full', trigger: 'manual', progress: 100, error: null });
    expect(run.rows_loaded).toBe(SALES.length + 3);
    expect(run.user_id).toBe(cast.users.wsAdmin.id);
    expect(run.started_at && run.finished_at).toBeTruthy();
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${run.job_id}/history`, owner()));
    expect(history.content.map((s) => s.state)).toEqual(['queued', 'running', 'running', 'running', 'succeeded']);
    const list = ok<RunPage>(await api.get(`/api/datasets/${mat.id}/extracts`, cast.tokens.viewer));
    expect(list.content[0].job_id).toBe(run.job_id);
    expect(list.page.total_elements).toBeGreaterThanOrEqual(1);
    const after = ok<{ count: number }>(await api.get('/api/notifications/unread-count', owner())).count;
    expect(after).toBe(before + 1);
  });

  it('the same widgets give the same rows live and on the extract', async () => {
    for (const [name, config] of Object.entries(WIDGETS)) {
      const [a, b] = [await widgetOn(live.id, config), await widgetOn(mat.id, config)];
      const [liveRows, extractRows] = [await rowsOf(a, owner()), await rowsOf(b, owner())];
      expect(liveRows.length, name).toBeGreaterThan(0);
      expect(extractRows, name).toEqual(liveRows);
    }
  });

  it('with row- and column-level security the extract answers each reader as live does', async () => {
    const viewer = cast.users.viewer.id;
    ok(
      await api.put(
        `/api/users/${viewer}/attributes`,
        { attributes: { product: ['чай', 'кофе'] } },
        cast.tokens.sysadmin,
      ),
    );
    for (const ds of [live, mat]) {
      ok(
        await api.post(
          `/api/dataset/${ds.id}/rls-rules`,
          { field_id: ds.fieldId('product'), attribute: 'product', operator: 'in', user_ids: [viewer] },
          owner(),
        ),
      );
      ok(
        await api.post(
          `/api/dataset/${ds.id}/cls-rules`,
          { field_ids: [ds.fieldId('amount')], action: 'mask', user_ids: [viewer] },
          owner(),
        ),
      );
    }
    const config = WIDGETS.details;
    const [a, b] = [await widgetOn(live.id, config), await widgetOn(mat.id, config)];
    const [liveRows, extractRows] = [await rowsOf(a, cast.tokens.viewer!), await rowsOf(b, cast.tokens.viewer!)];
    expect(new Set(liveRows.map((r) => (r as { p: string }).p))).toEqual(new Set(['чай', 'кофе']));
    expect(liveRows.map((r) => (r as { a: unknown }).a).filter((a) => a !== '***' && a !== null)).toEqual([]);
    expect(extractRows).toEqual(liveRows);
    // The owner is not under the rules: all products, real amounts, on both.
    const [ownLive, ownExtract] = [await rowsOf(a, owner()), await rowsOf(b, owner())];
    expect(ownExtract).toEqual(ownLive);
    expect(ownLive.length).toBeGreaterThan(liveRows.length);
  });
});

describe('incremental mode', () => {
  it('adds only the rows above the extract maximum of the incremental field', async () => {
    ok(
      await api.put(
        `/api/dataset/${mat.id}/extraction`,
        { mode: 'incremental', incremental_field_id: mat.fieldId('id') },
        owner(),
      ),
    );
    const base = SALES.length;
    await db.query(
      `INSERT INTO ${tables.sales} SELECT g, 1, 'новый', 1.5, 1, '2025-01-01' FROM generate_series($1::int, $2::int) g`,
      [base + 1, base + 5],
    );
    const run = await runExtract(api, owner(), mat.id);
    expect(run.mode).toBe('incremental');
    // 5 new sales rows, the 3 regions reloaded in full.
    expect(run.rows_loaded).toBe(5 + 3);
    const w = await widgetOn(mat.id, WIDGETS.byProduct);
    const rows = (await rowsOf(w, owner())) as { p: string; n: number }[];
    expect(rows.find((r) => r.p === 'новый')?.n).toBe(5);
    expect(rows.reduce((s, r) => s + Number(r.n), 0)).toBe(base + 5);
    // A full run over the same data gives the same answer.
    await runExtract(api, owner(), mat.id, { mode: 'full' });
    const again = (await rowsOf(await widgetOn(mat.id, WIDGETS.byProduct), owner())) as { p: string; n: number }[];
    expect(again).toEqual(rows);
  });
});

describe('who may do what', () => {
  it('a viewer reads runs but cannot start or cancel one; another workspace does not see them', async () => {
    const res = await api.post(`/api/datasets/${mat.id}/extracts`, {}, cast.tokens.viewer);
    expect(res.status).toBe(403);
    const runs = ok<RunPage>(await api.get(`/api/datasets/${mat.id}/extracts`, cast.tokens.viewer));
    const jobId = runs.content[0].job_id;
    expect(ok<RunView>(await api.get(`/api/etl-jobs/${jobId}`, cast.tokens.viewer)).job_id).toBe(jobId);
    expect((await api.post(`/api/etl-jobs/${jobId}/cancel`, undefined, cast.tokens.viewer)).status).toBe(403);
    expect((await api.get(`/api/etl-jobs/${jobId}`, cast.tokens.plain)).status).toBe(404);
    expect((await api.get(`/api/etl-jobs/${jobId}/history`, cast.tokens.plain)).status).toBe(404);
  });
});
