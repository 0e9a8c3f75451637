import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { z } from 'zod';
import type { dashboardDataOutput } from '../../../routers/dashboards/schemas';
import type { rollupOutput } from '../../../routers/rollups/schemas';
import { datasetClsRules } from '../../../db/schema/dataset-cls-rules';
import { datasetRlsRules } from '../../../db/schema/dataset-rls-rules';
import { readCachesChanged } from '../../../server/kernel/read-epoch';
import { setRollupReads } from '../../../server/query/rollups/read-rollup';
import { useTestApp } from '../../support/app';
import { failure, ok, type RestResponse } from '../../support/rest';
import { postDashboard } from '../dashboards/world';
import {
  createPgSource,
  createSalesDataset,
  createSalesWorld,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
  type WidgetView,
} from '../widgets/world';

/*
 * Widget reads answered from a rollup over REST, on a live PostgreSQL dataset (sales LEFT JOIN regions): the rollup
 * defined and built through its operations, then widget data, widget preview and dashboard data read with rollups on
 * and off: the same answers, X-Data-Path saying which path gave them; the viewer's row and column rules applied to
 * rollup reads exactly as to live reads; what a rollup cannot answer exactly answered live.
 */

type Rollup = z.output<typeof rollupOutput>;
type DashboardData = z.output<typeof dashboardDataOutput>;

const SALES = makeSales(240);
const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
let rollupId: number;

const owner = () => world.cast.tokens.wsAdmin!;
const rollupsPath = () => `/api/dataset/${world.datasetId}/rollups`;
const dataPath = (res: RestResponse) => res.headers['x-data-path'];

async function widget(config: Record<string, unknown>): Promise<number> {
  return ok<WidgetView>(
    await api.post(
      '/api/widget',
      { name: 'w', type: 'table', dataset_id: world.datasetId, ...config },
      world.cast.tokens.editor,
    ),
  ).id;
}

/** Widget data with rollups on and off: both answers and both paths. */
async function bothWays(widgetId: number, token: string | undefined, body: Record<string, unknown> = {}) {
  const on = await api.post(`/api/widget/${widgetId}/data`, body, token);
  setRollupReads(t.deps, false);
  try {
    const off = await api.post(`/api/widget/${widgetId}/data`, body, token);
    return { on, off };
  } finally {
    setRollupReads(t.deps, true);
  }
}

async function clearRules() {
  await t.deps.db.delete(datasetRlsRules);
  await t.deps.db.delete(datasetClsRules);
  readCachesChanged(t.deps);
}

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, SALES);
  await t.deps.jobs.start();
  const f = world.fieldId;
  const created = ok<Rollup>(
    await api.post(
      rollupsPath(),
      {
        name: 'by month, product and region',
        dimensions: [
          { field_id: f('sold_on'), granularity: 'month' },
          { field_id: f('product') },
          { field_id: f('name') },
        ],
        measures: [
          { field_id: f('amount'), aggregation: 'AVG' },
          { field_id: f('qty'), aggregation: 'SUM' },
          { field_id: f('qty'), aggregation: 'MAX' },
        ],
        refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'UTC' },
      },
      owner(),
    ),
  );
  rollupId = created.id;
  ok(await api.post(`${rollupsPath()}/${rollupId}/build`, {}, owner()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = ok<Rollup>(await api.get(`${rollupsPath()}/${rollupId}`, owner()));
    if (r.fresh && r.last_build?.state === 'succeeded') break;
    if (r.last_build && ['failed', 'cancelled'].includes(r.last_build.state))
      throw new Error(`build ${r.last_build.state}: ${r.last_build.error}`);
    if (Date.now() > deadline) throw new Error('the rollup was not built in 60 s');
    await new Promise((res) => setTimeout(res, 200));
  }
}, 120_000);

afterAll(async () => {
  await clearRules();
  await world?.dispose();
});

describe('widget reads answered from rollups', () => {
  it('widget data: the rollup answers what live answers, X-Data-Path rollup, then live with rollups off', async () => {
    const id = await widget({
      rows: [
        { id: 'q', sql: "DATETRUNC('quarter', [sales.sold_on])" },
        { id: 'r', sql: '[regions.name]' },
      ],
      columns: [
        { id: 's', sql: 'SUM([sales.qty])' },
        { id: 'a', sql: 'AVG([sales.amount])' },
      ],
      sorts: [{ field_id: 's', direction: 'desc' }],
    });
    const body = { filters: [{ sql: '[sales.product]', op: 'in', values: ['чай', 'кофе'] }], page_size: 5 };
    const { on, off } = await bothWays(id, world.cast.tokens.viewer, body);
    expect(dataPath(on)).toBe('rollup');
    expect(dataPath(off)).toBe('live');
    const [a, b] = [ok<FlatData>(on), ok<FlatData>(off)];
    expect(a.rows.length).toBe(5);
    expect(a.page).toEqual(b.page);
    expect(a.rows.map((r) => ({ ...r, a: Number((r.a as number).toFixed(9)) }))).toEqual(
      b.rows.map((r) => ({ ...r, a: Number((r.a as number).toFixed(9)) })),
    );
    expect(a.rows[0].q).toMatch(/^2024-\d\d-01T00:00:00$/); // a timestamp, as PostgreSQL answers DATE_TRUNC
  });

  it('what no rollup answers exactly is read live: COUNT DISTINCT, a finer granularity, a filter on a measure field', async () => {
    const countd = await widget({
      rows: [{ id: 'r', sql: '[regions.name]' }],
      columns: [{ id: 'c', sql: 'COUNTD([sales.product])' }],
    });
    const byDay = await widget({
      rows: [{ id: 'd', sql: "DATETRUNC('day', [sales.sold_on])" }],
      columns: [{ id: 's', sql: 'SUM([sales.qty])' }],
    });
    const onQty = await widget({
      rows: [{ id: 'r', sql: '[regions.name]' }],
      columns: [{ id: 's', sql: 'SUM([sales.qty])' }],
      filters: [{ sql: '[sales.qty]', op: 'gt', values: [2], value_type: 'number' }],
    });
    for (const id of [countd, byDay, onQty]) {
      const { on, off } = await bothWays(id, world.cast.tokens.viewer);
      expect(dataPath(on)).toBe('live');
      expect(ok(on)).toEqual(ok(off));
    }
  });

  it('widget preview and dashboard data say their paths; a dashboard lists the distinct ones', async () => {
    const preview = await api.post(
      '/api/widget/preview',
      {
        type: 'kpi',
        dataset_id: world.datasetId,
        columns: [{ id: 'm', sql: 'MAX([sales.qty])' }],
        filters: [{ sql: '[regions.name]', op: 'eq', values: ['Юг'] }],
      },
      world.cast.tokens.editor,
    );
    expect(dataPath(preview)).toBe('rollup');
    const served = await widget({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 's', sql: 'SUM([sales.qty])' }],
    });
    const notServed = await widget({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'c', sql: 'COUNTD([regions.name])' }],
    });
    const dashboard = await postDashboard(api, world.cast.tokens.editor, world.cast.workspaceId);
    ok(
      await api.put(
        `/api/dashboard/${dashboard.id}/schema`,
        {
          items: [
            { widget_id: served, x: 0, y: 0, w: 4, h: 4 },
            { widget_id: notServed, x: 4, y: 0, w: 4, h: 4 },
          ],
        },
        world.cast.tokens.editor,
      ),
    );
    const both = await api.post(`/api/dashboard/${dashboard.id}/data`, {}, world.cast.tokens.viewer);
    expect(dataPath(both)).toBe('rollup,live');
    setRollupReads(t.deps, false);
    const live = await api.post(`/api/dashboard/${dashboard.id}/data`, {}, world.cast.tokens.viewer);
    setRollupReads(t.deps, true);
    expect(dataPath(live)).toBe('live');
    expect(ok<DashboardData>(both)).toEqual(ok<DashboardData>(live));
  });

  it("a viewer's row rule on a dimension filters the rollup; a rule on another field sends that viewer live", async () => {
    await clearRules();
    const { viewer, editor } = world.cast.users;
    ok(
      await api.put(
        `/api/users/${viewer.id}/attributes`,
        { attributes: { region: ['Юг'] } },
        world.cast.tokens.sysadmin,
      ),
    );
    ok(
      await api.post(
        `/api/dataset/${world.datasetId}/rls-rules`,
        { field_id: world.fieldId('name'), attribute: 'region', operator: 'in', user_ids: [viewer.id] },
        owner(),
      ),
    );
    const id = await widget({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 's', sql: 'SUM([sales.qty])' }],
    });
    const south = await bothWays(id, world.cast.tokens.viewer);
    expect(dataPath(south.on)).toBe('rollup');
    expect(ok(south.on)).toEqual(ok(south.off));
    const everyone = await bothWays(id, world.cast.tokens.editor);
    expect(ok<FlatData>(everyone.on).rows).not.toEqual(ok<FlatData>(south.on).rows);
    const southQty = SALES.filter((s) => s.region_id === 2).reduce((n, s) => n + s.qty, 0);
    expect(ok<FlatData>(south.on).rows.reduce((n, r) => n + (r.s as number), 0)).toBe(southQty);

    await clearRules();
    ok(await api.put(`/api/users/${viewer.id}/attributes`, { attributes: { qty: ['1'] } }, world.cast.tokens.sysadmin));
    ok(
      await api.post(
        `/api/dataset/${world.datasetId}/rls-rules`,
        { field_id: world.fieldId('qty'), attribute: 'qty', operator: 'in', user_ids: [viewer.id] },
        owner(),
      ),
    );
    const onQty = await bothWays(id, world.cast.tokens.viewer);
    expect(dataPath(onQty.on)).toBe('live');
    expect(ok(onQty.on)).toEqual(ok(onQty.off));
    expect(dataPath((await bothWays(id, world.cast.tokens.editor)).on)).toBe('rollup');
    void editor;
    await clearRules();
  });

  it('column rules: a hidden field is refused as live refuses it, a masked measure is masked from the rollup', async () => {
    await clearRules();
    const viewer = world.cast.users.viewer;
    ok(
      await api.post(
        `/api/dataset/${world.datasetId}/cls-rules`,
        { field_ids: [world.fieldId('amount')], action: 'hide', user_ids: [viewer.id] },
        owner(),
      ),
    );
    ok(
      await api.post(
        `/api/dataset/${world.datasetId}/cls-rules`,
        { field_ids: [world.fieldId('qty')], action: 'mask', user_ids: [viewer.id] },
        owner(),
      ),
    );
    const avg = await widget({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 'a', sql: 'AVG([sales.amount])' }],
    });
    const hidden = await bothWays(avg, world.cast.tokens.viewer);
    expect(hidden.on.status).toBe(hidden.off.status);
    expect(failure(hidden.on).message).toBe(failure(hidden.off).message);
    expect(failure(hidden.on).errors).toEqual(failure(hidden.off).errors);
    expect(dataPath(hidden.on)).toBeUndefined();

    const sum = await widget({
      rows: [{ id: 'p', sql: '[sales.product]' }],
      columns: [{ id: 's', sql: 'SUM([sales.qty])' }],
    });
    const masked = await bothWays(sum, world.cast.tokens.viewer);
    expect(dataPath(masked.on)).toBe('rollup');
    expect(ok(masked.on)).toEqual(ok(masked.off));
    expect(ok<FlatData>(masked.on).rows.every((r) => r.s === '***')).toBe(true);
    expect(dataPath((await bothWays(avg, world.cast.tokens.editor)).on)).toBe('rollup');
    await clearRules();
  });
});

describe('a materialised dataset', () => {
  it('reads its rollup (built from the extract) or, with rollups off, its extract: the same answers', async () => {
    const db = await sourceDb();
    const tables = await createSourceTables(db, SALES);
    onTestFinished(async () => {
      await dropSourceTables(db, tables);
      await db.end();
    });
    const sourceId = await createPgSource(t.deps, world.cast.workspaceId, world.cast.users.wsAdmin.id);
    const ds = await createSalesDataset(api, owner(), { workspaceId: world.cast.workspaceId, sourceId, tables });
    ok(await api.put(`/api/dataset/${ds.id}`, { live: false }, owner()));
    const run = ok<{ job_id: number }>(await api.post(`/api/datasets/${ds.id}/extracts`, {}, owner()));
    await until(async () => {
      const state = ok<{ state: string; error: string | null }>(await api.get(`/api/etl-jobs/${run.job_id}`, owner()));
      if (['failed', 'cancelled'].includes(state.state)) throw new Error(`extract ${state.state}: ${state.error}`);
      return state.state === 'succeeded';
    });
    const path = `/api/dataset/${ds.id}/rollups`;
    const rollup = ok<Rollup>(
      await api.post(
        path,
        {
          name: 'by quarter',
          dimensions: [{ field_id: ds.fieldId('sold_on'), granularity: 'quarter' }, { field_id: ds.fieldId('name') }],
          measures: [{ field_id: ds.fieldId('amount'), aggregation: 'SUM' }],
        },
        owner(),
      ),
    );
    ok(await api.post(`${path}/${rollup.id}/build`, {}, owner()));
    await until(async () => {
      const r = ok<Rollup>(await api.get(`${path}/${rollup.id}`, owner()));
      if (r.last_build && ['failed', 'cancelled'].includes(r.last_build.state))
        throw new Error(`build ${r.last_build.state}: ${r.last_build.error}`);
      return r.fresh;
    });
    const id = ok<WidgetView>(
      await api.post(
        '/api/widget',
        {
          name: 'w',
          type: 'table',
          dataset_id: ds.id,
          rows: [
            { id: 'y', sql: "DATETRUNC('year', [sales.sold_on])" },
            { id: 'r', sql: '[regions.name]' },
          ],
          columns: [{ id: 's', sql: 'SUM([sales.amount])' }],
        },
        world.cast.tokens.editor,
      ),
    ).id;
    const { on, off } = await bothWays(id, world.cast.tokens.viewer);
    expect(dataPath(on)).toBe('rollup');
    expect(dataPath(off)).toBe('extract');
    // The rollup keeps a float field's sums as DOUBLE: the sum of sums may differ in the last digits of a decimal
    // column's exact sum (464.96999999999997 for 464.97), which the extract keeps as DECIMAL.
    const digits = (d: FlatData) => d.rows.map((r) => ({ ...r, s: Number((r.s as number).toPrecision(12)) }));
    expect(digits(ok<FlatData>(on))).toEqual(digits(ok<FlatData>(off)));
    expect(ok<FlatData>(on).page).toEqual(ok<FlatData>(off).page);
    expect(ok<FlatData>(on).rows[0].y).toBe('2024-01-01T00:00:00'); // DuckDB's DATE_TRUNC answers a timestamp
  }, 120_000);
});

async function until(done: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not done in ${ms} ms`);
    await new Promise((res) => setTimeout(res, 200));
  }
}
