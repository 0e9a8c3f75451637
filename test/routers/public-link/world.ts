import type pg from 'pg';
import type { z } from 'zod';
import type { shareLinkList, shareLinkView } from '../../../routers/share-links/schemas';
import type {
  fieldValuesOutput,
  linkStateOutput,
  publicDashboardOutput,
  publicWidgetOutput,
} from '../../../routers/public-link/schemas';
import type { widgetDataOutput } from '../../../routers/widgets/schemas';
import type { TestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok, type Rest } from '../../support/rest';
import { postDashboard, widgetDetailsOf } from '../dashboards/world';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type Sale,
} from '../widgets/world';

// Answers of the share-link and public viewer operations, as the routers' zod outputs describe them.
export type ShareLink = z.output<typeof shareLinkView>;
export type ShareLinkList = z.output<typeof shareLinkList>;
export type LinkState = z.output<typeof linkStateOutput>;
export type PublicDashboard = z.output<typeof publicDashboardOutput>;
export type PublicWidget = z.output<typeof publicWidgetOutput>;
export type WidgetData = z.output<typeof widgetDataOutput>;
export type FieldValues = z.output<typeof fieldValuesOutput>;

/*
 * A shared dashboard over a real PostgreSQL table of known sales: a bar of qty by product, a KPI of total qty, a pie
 * by region and a table, all on one dashboard (two tabs) made by the workspace's Редактор, with a selector on the
 * product that drives the bar and the KPI. A second dashboard holds a widget that is not on the first.
 */
export interface ShareWorld {
  cast: RoleCast;
  sales: Sale[];
  datasetId: number;
  productField: number;
  regionField: number;
  qtyField: number;
  dashboardId: number;
  otherDashboardId: number;
  widgets: { bar: number; kpi: number; pie: number; table: number; line: number; other: number };
  /** The owner's token (the dashboard's author). */
  owner: string;
  linksPath: string;
  dispose(): Promise<void>;
}

export async function createShareWorld(t: TestApp, api: Rest, rows = 30): Promise<ShareWorld> {
  const cast = await createRoleCast(t.deps, api);
  const db: pg.Client = await sourceDb();
  const sales = makeSales(rows);
  const tables = await createSourceTables(db, sales);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  const ds = await createSalesDataset(api, cast.tokens.wsAdmin!, {
    workspaceId: cast.workspaceId,
    sourceId: source,
    tables,
  });
  const owner = cast.tokens.editor!;
  const widget = async (over: Record<string, unknown>) =>
    widgetDetailsOf(await api.post('/api/widget', { name: 'w', type: 'table', dataset_id: ds.id, ...over }, owner)).id;
  const byProduct = {
    rows: [{ id: 'p', sql: '[sales.product]' }],
    columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
    sorts: [{ field_id: 'p', direction: 'asc' }],
  };
  const widgets = {
    bar: await widget({ name: 'Продажи по товарам', type: 'bar', ...byProduct }),
    kpi: await widget({ name: 'Всего штук', type: 'kpi', columns: [{ id: 'q', sql: 'SUM([sales.qty])' }] }),
    pie: await widget({
      name: 'По регионам',
      type: 'pie',
      rows: [{ id: 'r', sql: '[regions.name]' }],
      columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
      sorts: [{ field_id: 'r', direction: 'asc' }],
    }),
    line: await widget({
      name: 'По месяцам',
      type: 'line',
      rows: [{ id: 'm', sql: 'MONTH([sales.sold_on])' }],
      columns: [{ id: 'q', sql: 'SUM([sales.qty])' }],
      sorts: [{ field_id: 'm', direction: 'asc' }],
    }),
    table: await widget({ name: 'Таблица', type: 'table', ...byProduct }),
    other: await widget({ name: 'Чужой', type: 'kpi', columns: [{ id: 'q', sql: 'COUNT()' }] }),
  };
  const dashboardId = (await postDashboard(api, owner, cast.workspaceId, { name: 'Продажи' })).id;
  ok(
    await api.put(
      `/api/dashboard/${dashboardId}/schema`,
      {
        tabs: [
          { id: 'main', name: 'Главная' },
          { id: 'more', name: 'Подробно' },
        ],
        items: [
          { widget_id: widgets.bar, tab_id: 'main', x: 0, y: 0, w: 6, h: 4 },
          { widget_id: widgets.kpi, tab_id: 'main', x: 6, y: 0, w: 3, h: 2 },
          { widget_id: widgets.pie, tab_id: 'main', x: 9, y: 0, w: 3, h: 4 },
          { widget_id: widgets.line, tab_id: 'more', x: 0, y: 0, w: 6, h: 4 },
          { widget_id: widgets.table, tab_id: 'more', x: 6, y: 0, w: 6, h: 4 },
        ],
        selectors: [
          {
            id: 'product',
            name: 'Товар',
            field_id: ds.fieldId('product'),
            values: [],
            widget_ids: [widgets.bar, widgets.kpi],
          },
        ],
      },
      owner,
    ),
  );
  const otherDashboardId = (await postDashboard(api, owner, cast.workspaceId)).id;
  ok(
    await api.put(
      `/api/dashboard/${otherDashboardId}/schema`,
      { items: [{ widget_id: widgets.other, x: 0, y: 0, w: 1, h: 1 }] },
      owner,
    ),
  );
  return {
    cast,
    sales,
    datasetId: ds.id,
    productField: ds.fieldId('product'),
    regionField: ds.fieldId('name'),
    qtyField: ds.fieldId('qty'),
    dashboardId,
    otherDashboardId,
    widgets,
    owner,
    linksPath: `/api/dashboard/${dashboardId}/share-links`,
    async dispose() {
      await dropSourceTables(db, tables);
      await db.end();
    },
  };
}

/** Issues a link on the world's dashboard as its owner. */
export async function issueLink(api: Rest, w: ShareWorld, body: Record<string, unknown> = {}): Promise<ShareLink> {
  return ok<ShareLink>(await api.post(w.linksPath, { name: 'Для партнёров', ...body }, w.owner));
}

/** The public viewer paths, called without an Authorization header (a grant when given). */
export function viewer(api: Rest) {
  const headers = (grant?: string): Record<string, string> => (grant ? { 'x-share-grant': grant } : {});
  const base = (token: string) => `/api/public/link/${token}`;
  return {
    state: (token: string, grant?: string) => api.call('GET', base(token), { headers: headers(grant) }),
    dashboard: (token: string, grant?: string) =>
      api.call('GET', `${base(token)}/dashboard`, { headers: headers(grant) }),
    widget: (token: string, id: number, grant?: string) =>
      api.call('GET', `${base(token)}/widget/${id}`, { headers: headers(grant) }),
    data: (token: string, id: number, body: Record<string, unknown> = {}, grant?: string) =>
      api.call('POST', `${base(token)}/widget/${id}/data`, { body, headers: headers(grant) }),
    values: (token: string, datasetId: number, fieldId: number, grant?: string) =>
      api.call('GET', `${base(token)}/dataset/${datasetId}/field-values`, {
        headers: headers(grant),
        query: { fieldId: String(fieldId) },
      }),
    unlock: (token: string, password: string) => api.call('POST', `${base(token)}/unlock`, { body: { password } }),
  };
}

/** Sum of qty by product over the sales, as the bar widget answers it. */
export function qtyByProduct(sales: Sale[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of sales) m.set(s.product, (m.get(s.product) ?? 0) + s.qty);
  return m;
}
