import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { z } from 'zod';
import type { dashboardDataOutput } from '../../../routers/dashboards/schemas';
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
  type KpiData,
} from '../widgets/world';
import { postDashboard, widgetDetailsOf } from './world';

type DashboardData = z.output<typeof dashboardDataOutput>;

const { t, api } = useTestApp();
const SALES = makeSales(30);
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let productField: number;
let datasetId: number;
/** Rows by product; total qty (a KPI); qty scaled by the dataset parameter `rate`. */
let byProduct: number;
let kpi: number;
let scaled: number;
let dashboardId: number;

const widget = async (over: Record<string, unknown>) =>
  widgetDetailsOf(
    await api.post('/api/widget', { name: 'w', type: 'table', dataset_id: datasetId, ...over }, cast.tokens.editor),
  ).id;
const data = (body: Record<string, unknown> = {}, token = cast.tokens.viewer, id = dashboardId) =>
  api.post(`/api/dashboard/${id}/data`, body, token);
const sumQty = (rows: typeof SALES) => rows.reduce((a, s) => a + s.qty, 0);

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, SALES);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
    parameters: [{ id: -51, name: 'rate', primitive_type: 'number', default_value: '2' }],
  });
  datasetId = ds.id;
  productField = ds.fieldId('product');
  byProduct = await widget({
    rows: [{ id: 'p', sql: '[sales.product]' }],
    columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    sorts: [{ field_id: 'p', direction: 'asc' }],
  });
  kpi = await widget({ type: 'kpi', columns: [{ id: 'q', sql: 'SUM([sales.qty])' }] });
  scaled = await widget({ type: 'kpi', columns: [{ id: 's', sql: 'SUM([sales.qty] * [rate])' }] });
  dashboardId = (await postDashboard(api, cast.tokens.editor, cast.workspaceId)).id;
  ok(
    await api.put(
      `/api/dashboard/${dashboardId}/schema`,
      {
        items: [byProduct, kpi, scaled].map((id, i) => ({ widget_id: id, x: i, y: 0, w: 1, h: 1 })),
        selectors: [
          { id: 'product', name: 'Товар', field_id: productField, values: ['чай'], widget_ids: [kpi, scaled] },
        ],
        parameters: [{ name: 'rate', value: 3, widget_ids: [scaled] }],
      },
      cast.tokens.editor,
    ),
  );
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('POST /api/dashboard/{id}/data', () => {
  it('answers every widget of the layout, with the saved selector values and parameters on the widgets they drive', async () => {
    const res = ok<DashboardData>(await data());
    expect(res.widgets.map((w) => w.widget_id)).toEqual([byProduct, kpi, scaled]);
    const [flat, total, times] = res.widgets.map((w) => ('data' in w ? w.data : undefined));
    const products = [...new Set(SALES.map((s) => s.product))].sort();
    // Not driven by the selector: every product.
    expect(((flat as FlatData).rows as { p: string }[]).map((r) => r.p).sort()).toEqual(products);
    const tea = SALES.filter((s) => s.product === 'чай');
    expect(Number((total as KpiData).row.q)).toBe(sumQty(tea));
    expect(Number((times as KpiData).row.s)).toBe(sumQty(tea) * 3);
  });

  it("takes the requested widgets only, and the request's selector values and parameters", async () => {
    const res = ok<DashboardData>(
      await data({
        widget_ids: [scaled, kpi],
        filters: [{ selector_id: 'product', values: ['кофе', 'сок'] }],
        parameters: { rate: 0.5 },
      }),
    );
    expect(res.widgets.map((w) => w.widget_id)).toEqual([scaled, kpi]);
    const picked = SALES.filter((s) => s.product === 'кофе' || s.product === 'сок');
    const [times, total] = res.widgets.map((w) => ('data' in w ? (w.data as KpiData).row : undefined));
    expect(Number(times!.s)).toBe(sumQty(picked) * 0.5);
    expect(Number(total!.q)).toBe(sumQty(picked));
    // Cleared: no filter at all.
    const cleared = ok<DashboardData>(
      await data({ widget_ids: [kpi], filters: [{ selector_id: 'product', values: [] }] }),
    );
    expect(Number(('data' in cleared.widgets[0] ? (cleared.widgets[0].data as KpiData).row : {}).q)).toBe(
      sumQty(SALES),
    );
  });

  it('gives a failing widget an error entry and still answers the others', async () => {
    const broken = await widget({ type: 'kpi', columns: [{ id: 's', sql: 'SUM([sales.qty] * [rate])' }] });
    const d = (await postDashboard(api, cast.tokens.editor, cast.workspaceId)).id;
    ok(
      await api.put(
        `/api/dashboard/${d}/schema`,
        {
          items: [broken, kpi].map((id, i) => ({ widget_id: id, x: i, y: 0, w: 1, h: 1 })),
          // A value the dataset parameter (a number) does not take: that widget's read fails.
          parameters: [{ name: 'rate', value: 'не число', widget_ids: [broken] }],
        },
        cast.tokens.editor,
      ),
    );
    const res = ok<DashboardData>(await data({}, cast.tokens.viewer, d));
    expect(res.widgets[0]).toMatchObject({ widget_id: broken, error: { code: 422 } });
    expect(res.widgets[1]).toMatchObject({ widget_id: kpi, data: { kind: 'kpi' } });
  });

  it('refuses what the layout does not have (422), outsiders (404) and view-as by a non-administrator (403)', async () => {
    const bad = await data({
      widget_ids: [2147483000],
      filters: [{ selector_id: 'nope', values: [] }],
      parameters: { nope: 1 },
    });
    expect(bad.status).toBe(422);
    expect(failure(bad).errors).toEqual({
      'widgetIds[0]': 'Виджет не размещён на дашборде (id 2147483000)',
      'filters[0].selectorId': 'Селектор дашборда не найден (id nope)',
      'parameters.nope': 'Параметр дашборда не найден: nope',
    });
    expect((await data({}, cast.tokens.plain)).status).toBe(404);
    const viewAs = await data({ view_as_user_id: cast.users.viewer.id }, cast.tokens.editor);
    expect(viewAs.status).toBe(403);
    expect(failure(viewAs).message).toBe('Доступ запрещён');
    const asViewer = ok<DashboardData>(
      await data({ widget_ids: [kpi], view_as_user_id: cast.users.viewer.id }, cast.tokens.sysadmin),
    );
    expect(asViewer.widgets[0]).toMatchObject({ widget_id: kpi, data: { kind: 'kpi' } });
  });
});
