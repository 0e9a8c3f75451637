import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import { uniq } from '../../support/factories';
import type { DatasetDetails } from '../datasets/helpers';
import { createObjectDataset } from '../etl/world';
import { createPgSource, createSalesWorld, makeSales, sourceDb, type WidgetView } from '../widgets/world';
import { buildRollup, type RollupView, type SuggestAnswer } from './world';

/*
 * POST /api/dataset/{id}/rollups/suggest on a dataset with real widgets on real dashboards: the widgets' groupings
 * (with their DATETRUNC granularities), measures, filters and the dashboard selectors driving them become the
 * dimensions and measures of few rollups, with the widgets and dashboards each serves and its estimated rows; a
 * widget whose measure does not add up is listed as not served, with why. A suggestion is a definition that saves
 * and builds as it is.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
const owner = () => world.cast.tokens.wsAdmin!;
const widgets: Record<string, number> = {};
let dashboards: number[] = [];

async function widget(name: string, config: Record<string, unknown>): Promise<void> {
  const w = ok<WidgetView>(
    await api.post('/api/widget', { name, dataset_id: world.datasetId, type: 'table', ...config }, owner()),
  );
  widgets[name] = w.id;
}

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(300));
  await widget('byRegion', {
    rows: [{ id: 'r', sql: '[regions.name]' }],
    columns: [{ id: 's', sql: 'SUM([sales.amount])' }],
  });
  await widget('byMonth', {
    rows: [{ id: 'm', sql: "DATETRUNC('month', [sales.sold_on])" }],
    columns: [
      { id: 'n', sql: 'COUNT([sales.qty])' },
      { id: 'a', sql: 'AVG([sales.amount])' },
    ],
  });
  await widget('byQuarter', {
    rows: [{ id: 'q', sql: "DATETRUNC('quarter', [sales.sold_on])" }],
    // COUNT() of rows needs no measure: every rollup counts its groups' rows.
    columns: [
      { id: 'sq', sql: 'SUM([sales.qty])' },
      { id: 'rows', sql: 'COUNT()' },
    ],
  });
  await widget('distinct', { type: 'kpi', columns: [{ id: 'd', sql: 'COUNTD([sales.product])' }] });
  await widget('filtered', {
    rows: [{ id: 'p', sql: '[sales.product]' }],
    columns: [{ id: 'mx', sql: 'MAX([sales.amount])' }],
    filters: [{ sql: '[regions.name]', op: 'in', values: ['Север', 'Юг'] }],
  });
  for (const [name, items, selectors] of [
    ['Продажи', ['byRegion', 'byMonth', 'distinct'], [{ field: 'product', on: ['byMonth'] }]],
    ['Кварталы', ['byQuarter', 'filtered'], []],
  ] as const) {
    const d = ok<{ id: number }>(
      await api.post('/api/dashboard', { name, workspace_id: world.cast.workspaceId }, owner()),
    );
    ok(
      await api.put(
        `/api/dashboard/${d.id}/schema`,
        {
          items: items.map((w, i) => ({ widget_id: widgets[w], x: i, y: 0, w: 1, h: 1 })),
          selectors: selectors.map((s, i) => ({
            id: `s${i}`,
            name: s.field,
            field_id: world.fieldId(s.field),
            widget_ids: s.on.map((w) => widgets[w]),
          })),
        },
        owner(),
      ),
    );
    dashboards.push(d.id);
  }
});
afterAll(() => world.dispose());

async function fieldIdsOf(datasetId: number): Promise<Record<string, number>> {
  const d = ok<DatasetDetails>(await api.get(`/api/dataset/${datasetId}`, owner()));
  return Object.fromEntries(d.fields.map((f) => [f.name, f.id]));
}

it('suggests rollups answering the saved widgets, with the dashboards they serve and estimated rows', async () => {
  const answer = ok<SuggestAnswer>(await api.post(`/api/dataset/${world.datasetId}/rollups/suggest`, {}, owner()));
  expect(answer.not_served).toEqual([
    { widget_id: widgets.distinct, reason: 'мера COUNTD не складывается из итогов групп' },
  ]);
  // A small dataset: every widget fits in one rollup (the union of their dimensions stays small).
  expect(answer.suggestions).toHaveLength(1);
  const [s] = answer.suggestions;
  const f = world.fieldId;
  expect(s.widgets).toEqual(
    [widgets.byRegion, widgets.byMonth, widgets.byQuarter, widgets.filtered].sort((a, b) => a - b),
  );
  expect(s.widget_count).toBe(4);
  expect(s.dashboards).toEqual(dashboards);
  expect(s.dimensions).toEqual(
    [
      { field_id: f('product'), granularity: null },
      // month serves the quarters too
      { field_id: f('sold_on'), granularity: 'month' },
      { field_id: f('name'), granularity: null },
    ].sort((a, b) => a.field_id - b.field_id),
  );
  expect(s.measures).toEqual(
    [
      { field_id: f('amount'), aggregation: 'AVG' }, // AVG keeps SUM and COUNT of amount: SUM(amount) is not repeated
      { field_id: f('amount'), aggregation: 'MAX' },
      { field_id: f('qty'), aggregation: 'COUNT' },
      { field_id: f('qty'), aggregation: 'SUM' },
    ].sort((a, b) => a.field_id - b.field_id || a.aggregation.localeCompare(b.aggregation)),
  );
  // 4 region names (NULL too) x 6 products x 13 months = 312, capped by the dataset's 300 rows.
  expect(s.estimated_rows).toBe(300);

  // The suggestion saves and builds as it is.
  const rollup = ok<RollupView>(
    await api.post(
      `/api/dataset/${world.datasetId}/rollups`,
      {
        name: s.name,
        dimensions: s.dimensions,
        measures: s.measures,
        refresh: { mode: 'schedule', cron: '0 * * * *' },
      },
      owner(),
    ),
  );
  const build = await buildRollup(api, owner(), world.datasetId, rollup.id);
  expect(build.rows).toBeGreaterThan(0);
  expect(build.rows).toBeLessThanOrEqual(s.estimated_rows);
  // Every widget it was suggested for is answered from it.
  for (const id of s.widgets) {
    const data = await api.post(`/api/widget/${id}/data`, {}, owner());
    expect(data.headers['x-data-path'], `widget ${id}`).toBe('rollup');
  }
});

it('keeps rollups apart when their union would be large, each estimated by its distinct counts', async () => {
  // 100 000 rows: k2 has 200 values, k3 300; one rollup of both would hold up to 60 000 rows.
  const db = await sourceDb();
  const table = uniq('r_wide');
  try {
    await db.query(
      `CREATE TABLE ${table} AS SELECT g AS id, g % 200 AS k2, g % 300 AS k3, (g % 97)::float8 AS v FROM generate_series(1, 100000) g`,
    );
    const source = await createPgSource(t.deps, world.cast.workspaceId, world.cast.users.wsAdmin.id);
    const datasetId = await createObjectDataset(api, owner(), {
      name: uniq('wide'),
      workspaceId: world.cast.workspaceId,
      sourceId: source,
      object: { name: 'wide', schema: 'public', table },
      columns: [
        ['id', 'integer'],
        ['k2', 'integer'],
        ['k3', 'integer'],
        ['v', 'float'],
      ],
    });
    const ids: number[] = [];
    for (const k of ['k2', 'k3', 'k3'])
      ids.push(
        ok<WidgetView>(
          await api.post(
            '/api/widget',
            {
              name: k,
              dataset_id: datasetId,
              type: 'table',
              rows: [{ id: 'k', sql: `[wide.${k}]` }],
              columns: [{ id: 's', sql: 'SUM([wide.v])' }],
            },
            owner(),
          ),
        ).id,
      );
    const answer = ok<SuggestAnswer>(await api.post(`/api/dataset/${datasetId}/rollups/suggest`, {}, owner()));
    expect(answer.not_served).toEqual([]);
    // Most widgets served first; NULL counts as a group of its own in the estimate.
    expect(answer.suggestions.map((x) => [x.widgets, x.estimated_rows, x.dashboards])).toEqual([
      [[ids[1], ids[2]], 301, []],
      [[ids[0]], 201, []],
    ]);

    // A row rule on k2: every rollup keeps k2 so that it can apply the rule; the k2 rollup is then covered by the
    // other and merged into it.
    const fieldK2 = (await fieldIdsOf(datasetId)).k2;
    ok(
      await api.post(
        `/api/dataset/${datasetId}/rls-rules`,
        { operator: 'in', field_id: fieldK2, attribute: 'k2', user_ids: [world.cast.users.viewer.id] },
        owner(),
      ),
    );
    const ruled = ok<SuggestAnswer>(await api.post(`/api/dataset/${datasetId}/rollups/suggest`, {}, owner()));
    expect(ruled.suggestions).toHaveLength(1);
    expect(ruled.suggestions[0].widgets).toEqual(ids);
    expect(ruled.suggestions[0].dimensions.map((d) => d.field_id)).toContain(fieldK2);
    expect(ruled.suggestions[0].estimated_rows).toBe(201 * 301);
  } finally {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.end();
  }
});
