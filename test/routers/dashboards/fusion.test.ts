import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import type { dashboardDataOutput } from '../../../routers/dashboards/schemas';
import { configureQueryEngine, type QueryEngine } from '../../../server/query/run/engine';
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
} from '../widgets/world';
import { postDashboard, widgetDetailsOf } from './world';

/*
 * POST /api/dashboard/{id}/data answers widgets of one dataset that differ only in their measures with one query
 * (server/query/read.ts readWidgetQueries): every widget's answer must be exactly what POST /api/widget/{id}/data
 * gives it, for every reader and their column rules, and the source must see fewer queries.
 */

type DashboardData = z.output<typeof dashboardDataOutput>;

const { t, api } = useTestApp();
const SALES = makeSales(60);
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let datasetId: number;
let fieldId: (name: string) => number;
let dashboardId: number;
let engine: QueryEngine;
const ids: Record<string, number> = {};

const widget = async (name: string, over: Record<string, unknown>) => {
  ids[name] = widgetDetailsOf(
    await api.post('/api/widget', { name, type: 'table', dataset_id: datasetId, ...over }, cast.tokens.editor),
  ).id;
};

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
  });
  datasetId = ds.id;
  fieldId = ds.fieldId;
  const byProduct = (id: string) => [{ id, sql: '[sales.product]' }];
  // Three that differ only in their measures (and their own ids and aliases): one query.
  await widget('sum', {
    rows: byProduct('p'),
    columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    sorts: [{ field_id: 'p', direction: 'desc' }],
  });
  await widget('count', {
    type: 'bar',
    rows: [{ id: 'prod', alias: 'Товар', sql: '[sales.product]' }],
    columns: [
      { id: 'n', sql: 'COUNT()' },
      { id: 'a', sql: 'AVG([sales.amount])' },
    ],
    sorts: [{ field_id: 'prod', direction: 'desc' }],
  });
  await widget('last', {
    rows: byProduct('x'),
    columns: [{ id: 'd', sql: 'MAX([sales.sold_on])' }],
    sorts: [{ field_id: 'x', direction: 'desc' }],
  });
  // Ordered by its measure: a query of its own.
  await widget('top', {
    rows: byProduct('p'),
    columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    sorts: [{ field_id: 'q', direction: 'desc' }],
  });
  // Other groups (by region), another page size, a filter: not with the product widgets.
  await widget('regions', {
    rows: [{ id: 'r', sql: '[sales.region_id]' }],
    columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    filters: [{ sql: '[sales.product]', op: 'in', values: ['чай', 'кофе'] }],
  });
  // Two KPIs: one query.
  await widget('kpiQty', { type: 'kpi', columns: [{ id: 'v', sql: 'SUM([sales.qty])' }] });
  await widget('kpiAmount', { type: 'kpi', columns: [{ id: 'v', sql: 'MAX([sales.amount])' }] });
  dashboardId = (await postDashboard(api, cast.tokens.editor, cast.workspaceId)).id;
  ok(
    await api.put(
      `/api/dashboard/${dashboardId}/schema`,
      { items: Object.values(ids).map((id, i) => ({ widget_id: id, x: i, y: 0, w: 1, h: 1 })) },
      cast.tokens.editor,
    ),
  );
  // The viewer: amount masked, sold_on hidden (the widget reading it fails for them alone).
  for (const [field, action] of [
    ['amount', 'mask'],
    ['sold_on', 'hide'],
  ] as const)
    ok(
      await api.post(
        `/api/dataset/${datasetId}/cls-rules`,
        { field_ids: [fieldId(field)], action, user_ids: [cast.users.viewer.id] },
        cast.tokens.wsAdmin,
      ),
    );
  engine = configureQueryEngine(t.deps, { ttlMs: 0 }); // every read runs its query: executions count them
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

/** Each widget read alone, as POST /api/widget/{id}/data answers it (its envelope's data or error). */
async function alone(token: string) {
  const out = new Map<number, unknown>();
  for (const id of Object.values(ids)) {
    const res = await api.post(`/api/widget/${id}/data`, { page: 1, page_size: 100 }, token);
    const body = res.body as { data?: unknown; error?: { code: number; message: string; errors?: unknown } };
    const { code, message, errors } = body.error ?? { code: 0, message: '' };
    out.set(id, res.status === 200 ? { data: body.data } : { error: { code, message, ...(errors ? { errors } : {}) } });
  }
  return out;
}

async function dashboard(token: string) {
  const before = engine.executions;
  const res = ok<DashboardData>(await api.post(`/api/dashboard/${dashboardId}/data`, {}, token));
  return { widgets: res.widgets, executions: engine.executions - before };
}

describe('dashboard data fuses widgets that differ only in their measures', () => {
  it('answers every widget exactly as it answers alone, with fewer queries', async () => {
    const expected = await alone(cast.tokens.editor!);
    const { widgets, executions } = await dashboard(cast.tokens.editor!);
    for (const w of widgets) {
      const { widget_id, ...answer } = w;
      expect(answer, `widget ${widget_id}`).toEqual(expected.get(widget_id));
    }
    expect(widgets.map((w) => w.widget_id)).toEqual(Object.values(ids));
    // sum + count + last, top, regions, the two KPIs: 4 queries for 7 widgets.
    expect(executions).toBe(4);
    const sum = widgets.find((w) => w.widget_id === ids.sum)!;
    const rows = 'data' in sum && sum.data.kind === 'flat' ? sum.data.rows : [];
    expect(rows.length).toBe(5);
    for (const r of rows) expect(r.q).toBe(SALES.filter((s) => s.product === r.p).reduce((a, s) => a + s.qty, 0));
  });

  it('keeps each reader column rules: masks in the fused answer, a hidden field fails its widget only', async () => {
    const expected = await alone(cast.tokens.viewer!);
    const { widgets, executions } = await dashboard(cast.tokens.viewer!);
    for (const w of widgets) {
      const { widget_id, ...answer } = w;
      expect(answer, `widget ${widget_id}`).toEqual(expected.get(widget_id));
    }
    const count = widgets.find((w) => w.widget_id === ids.count)!;
    expect('data' in count && count.data.kind === 'flat' && count.data.rows.every((r) => r.a === '***')).toBe(true);
    const last = widgets.find((w) => w.widget_id === ids.last)!;
    expect('error' in last && last.error.code).toBe(422);
    // The product group cannot be fused for this reader (one of them names a hidden field): read one by one, the
    // one naming it refused before it runs; top, regions, the two KPIs as one.
    expect(executions).toBe(5);
  });
});
