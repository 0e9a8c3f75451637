import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { setRollupReads } from '../../../server/query/rollups/read-rollup';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { createRoleCast, type RoleCast } from '../../support/factories';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
  type FlatData,
} from '../widgets/world';
import { materialise, runExtract } from '../etl/world';
import { buildRollup, rollupRows, servable, sortRows, waitForBuild, type BuildHistory, type RollupView } from './world';

/*
 * Builds on PostgreSQL: a live dataset's rollup is one GROUP BY pushed down to the source, and its rows are those of
 * the same GROUP BY run directly; a materialised dataset's is built from its extract, and again after each extract
 * run; a failed build keeps the previous build in service; a schema save makes the build stale until rebuilt.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;
let ds: Awaited<ReturnType<typeof createSalesDataset>>;
const owner = () => cast.tokens.wsAdmin!;
const sales = makeSales(300);

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, sales);
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  ds = await createSalesDataset(api, owner(), {
    workspaceId: cast.workspaceId,
    sourceId,
    tables,
    // Calculated fields that do not aggregate: a rollup may keep them as measures (one reads the other).
    extraFields: [
      { id: -32, name: 'Удвоенная', formula: '[sales.amount] * 2' },
      { id: -33, name: 'Через', formula: '[Удвоенная] + 1' },
    ],
  });
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

/** region name, month of sale, product; SUM/COUNT/MIN/MAX of amount, AVG of qty. */
function definition(f: (name: string) => number, extra: Record<string, unknown> = {}) {
  return {
    name: `by region month product ${Math.random()}`,
    dimensions: [{ field_id: f('name') }, { field_id: f('sold_on'), granularity: 'month' }, { field_id: f('product') }],
    measures: [
      { field_id: f('amount'), aggregation: 'SUM' },
      { field_id: f('amount'), aggregation: 'COUNT' },
      { field_id: f('amount'), aggregation: 'MIN' },
      { field_id: f('amount'), aggregation: 'MAX' },
      { field_id: f('qty'), aggregation: 'AVG' },
    ],
    refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'Europe/Moscow' },
    ...extra,
  };
}

/** The same GROUP BY, run straight at the source, normalised as the connectors normalise. */
async function directGroupBy(): Promise<unknown[][]> {
  const r = await db.query(
    `SELECT r.name, to_char(date_trunc('month', s.sold_on), 'YYYY-MM-DD') AS m, s.product,
            SUM(s.amount) AS s, COUNT(s.amount) AS n, MIN(s.amount) AS mn, MAX(s.amount) AS mx,
            SUM(s.qty) AS qs, COUNT(s.qty) AS qn, COUNT(*) AS all_rows
       FROM ${tables.sales} s LEFT JOIN ${tables.regions} r ON r.id = s.region_id
      GROUP BY 1, 2, 3`,
  );
  const num = (v: unknown) => (v === null ? null : Number(v));
  return sortRows(
    r.rows.map((x) => [
      x.name,
      x.m,
      x.product,
      num(x.s),
      num(x.n),
      num(x.mn),
      num(x.mx),
      num(x.qs),
      num(x.qn),
      num(x.all_rows),
    ]),
  );
}

describe('a live dataset on PostgreSQL', () => {
  let rollup: RollupView;

  it('builds its rollup with one GROUP BY at the source: the rows of the same GROUP BY run directly', async () => {
    rollup = ok<RollupView>(await api.post(`/api/dataset/${ds.id}/rollups`, definition(ds.fieldId), owner()));
    expect(rollup.fresh).toBe(false);
    expect(rollup.rows).toBeNull();
    expect(rollup.dimensions.map((d) => d.column)).toEqual(['d0', 'd1', 'd2']);
    expect(rollup.measures.map((m) => m.columns)).toEqual([
      { sum: 'm0_sum' },
      { count: 'm1_count' },
      { min: 'm2_min' },
      { max: 'm3_max' },
      { sum: 'm4_sum', count: 'm4_count' },
    ]);
    const build = await buildRollup(api, owner(), ds.id, rollup.id);
    const expected = await directGroupBy();
    expect(build.rows).toBe(expected.length);
    expect(await rollupRows(t.deps, ds.id, rollup.id)).toEqual(expected);
    const now = ok<RollupView>(await api.get(`/api/dataset/${ds.id}/rollups/${rollup.id}`, owner()));
    expect(now).toMatchObject({ fresh: true, rows: expected.length, last_build: { state: 'succeeded' } });
    expect(now.bytes).toBeGreaterThan(0);
    const history = ok<BuildHistory>(
      await api.get(`/api/dataset/${ds.id}/rollups/${rollup.id}/builds/${build.build_id}/history`, owner()),
    );
    expect(history.content.map((s) => s.state)).toEqual(['queued', 'running', 'running', 'succeeded']);
  });

  it('refuses a second build while the first is queued or running (400)', async () => {
    const first = await api.post(`/api/dataset/${ds.id}/rollups/${rollup.id}/build`, {}, owner());
    const second = await api.post(`/api/dataset/${ds.id}/rollups/${rollup.id}/build`, {}, owner());
    expect(first.status).toBe(200);
    expect(second.status).toBe(400);
    expect(failure(second).message).toMatch(/Агрегат уже собирается/);
    await waitForBuild(api, owner(), ds.id, rollup.id, (first.body as { data: { build_id: number } }).data.build_id);
  });

  it('keeps the previous build in service when a build fails', async () => {
    const before = (await servable(t.deps, ds.id)).find((s) => s.definition.id === rollup.id)!;
    const rows = await rollupRows(t.deps, ds.id, rollup.id);
    await db.query(`ALTER TABLE ${tables.sales} RENAME COLUMN amount TO amount_gone`);
    try {
      const failed = await buildRollup(api, owner(), ds.id, rollup.id, 'failed');
      expect(failed.error).toMatch(/amount/);
    } finally {
      await db.query(`ALTER TABLE ${tables.sales} RENAME COLUMN amount_gone TO amount`);
    }
    const after = (await servable(t.deps, ds.id)).find((s) => s.definition.id === rollup.id)!;
    expect(after.load.id).toBe(before.load.id);
    expect(await rollupRows(t.deps, ds.id, rollup.id)).toEqual(rows);
    const view = ok<RollupView>(await api.get(`/api/dataset/${ds.id}/rollups/${rollup.id}`, owner()));
    expect(view).toMatchObject({ fresh: true, last_build: { state: 'failed' } });
  });

  it('is stale after a schema save (not servable) until rebuilt', async () => {
    const d = ok<Record<string, unknown>>(await api.get(`/api/dataset/${ds.id}`, owner()));
    const schema = {
      objects: d.objects,
      fields: d.fields,
      relations: d.relations,
      hierarchies: d.hierarchies,
      filters: d.filters,
      parameters: d.parameters,
    };
    const saved = await api.put(`/api/dataset/${ds.id}/schema`, schema, owner());
    expect(saved.status, JSON.stringify(saved.body).slice(0, 500)).toBe(200);
    expect((await servable(t.deps, ds.id)).map((s) => s.definition.id)).not.toContain(rollup.id);
    expect(ok<RollupView>(await api.get(`/api/dataset/${ds.id}/rollups/${rollup.id}`, owner())).fresh).toBe(false);
    await buildRollup(api, owner(), ds.id, rollup.id);
    expect((await servable(t.deps, ds.id)).map((s) => s.definition.id)).toContain(rollup.id);
    expect(await rollupRows(t.deps, ds.id, rollup.id)).toEqual(await directGroupBy());
  });
});

describe('a materialised dataset', () => {
  it('builds from its extract, and again after every extract run (with_extract)', async () => {
    const mat = await createSalesDataset(api, owner(), { workspaceId: cast.workspaceId, sourceId, tables });
    await materialise(api, owner(), mat.id);
    const early = definition(mat.fieldId, { refresh: { mode: 'with_extract' } });
    const rollup = ok<RollupView>(await api.post(`/api/dataset/${mat.id}/rollups`, early, owner()));
    // Before the first synchronisation there is nothing to build from.
    const refused = await api.post(`/api/dataset/${mat.id}/rollups/${rollup.id}/build`, {}, owner());
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toMatch(/первая синхронизация/);

    // The first run queues the rollup's build.
    await runExtract(api, owner(), mat.id);
    const first = await waitForLastBuild(mat.id, rollup.id);
    expect(first).toMatchObject({ state: 'succeeded', trigger: 'extract' });
    expect(await rollupRows(t.deps, mat.id, rollup.id)).toEqual(await directGroupBy());
    const firstLoad = (await servable(t.deps, mat.id))[0].load;
    expect(firstLoad.extractLoadId).not.toBeNull();

    // New rows at the source: the rollup answers the old extract until the next run and its build.
    await db.query(
      `INSERT INTO ${tables.sales} VALUES (100001, 1, 'новинка', 10.50, 2, '2025-01-15'), (100002, 2, 'новинка', NULL, 1, '2025-01-20')`,
    );
    try {
      await runExtract(api, owner(), mat.id);
      const second = await waitForLastBuild(mat.id, rollup.id, first.build_id);
      expect(second).toMatchObject({ state: 'succeeded', trigger: 'extract' });
      const served = (await servable(t.deps, mat.id))[0].load;
      expect(served.id).not.toBe(firstLoad.id);
      expect(served.extractLoadId).not.toBe(firstLoad.extractLoadId);
      expect(await rollupRows(t.deps, mat.id, rollup.id)).toEqual(await directGroupBy());
    } finally {
      await db.query(`DELETE FROM ${tables.sales} WHERE id > 100000`);
    }
  });
});

/** The rollup's newest build once it ended (newer than `after`). */
async function waitForLastBuild(datasetId: number, rollupId: number, after = 0) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = ok<RollupView>(await api.get(`/api/dataset/${datasetId}/rollups/${rollupId}`, owner()));
    const b = view.last_build;
    if (b && b.build_id > after && ['succeeded', 'failed', 'cancelled'].includes(b.state)) return b;
    if (Date.now() > deadline) throw new Error(`no build of rollup ${rollupId} ended`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('calculated fields and row counts', () => {
  it("builds a rollup of a calculated measure and answers COUNT() of rows and the field's sum as live does", async () => {
    const f = ds.fieldId;
    const rollup = ok<RollupView>(
      await api.post(
        `/api/dataset/${ds.id}/rollups`,
        {
          name: 'calculated by product',
          dimensions: [{ field_id: f('product') }],
          measures: [{ field_id: f('Через'), aggregation: 'SUM' }],
          refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'UTC' },
        },
        owner(),
      ),
    );
    await buildRollup(api, owner(), ds.id, rollup.id);
    const direct = await db.query(
      `SELECT product, SUM(amount * 2 + 1)::text AS s, COUNT(*)::int AS n FROM ${tables.sales} GROUP BY 1`,
    );
    const expected = sortRows(direct.rows.map((r) => [r.product, Number(r.s), r.n]));
    expect(await rollupRows(t.deps, ds.id, rollup.id)).toEqual(expected);

    // A widget defines the dataset's calculated fields it names (its own definitions, the same formulas).
    const preview = (rollups: boolean) => {
      setRollupReads(t.deps, rollups);
      return api.post(
        '/api/widget/preview',
        {
          type: 'table',
          dataset_id: ds.id,
          rows: [{ id: 'p', sql: '[sales.product]' }],
          columns: [
            { id: 'n', sql: 'COUNT()' },
            { id: 's', sql: 'SUM([Через])' },
          ],
          calculated_fields: [
            { name: 'Через', sql: '[Удвоенная] + 1' },
            { name: 'Удвоенная', sql: '[sales.amount] * 2' },
          ],
        },
        owner(),
      );
    };
    try {
      const [on, off] = [await preview(true), await preview(false)];
      expect(on.headers['x-data-path'], JSON.stringify(on.body).slice(0, 300)).toBe('rollup');
      expect(off.headers['x-data-path']).toBe('live');
      expect(ok<FlatData>(on).rows).toEqual(ok<FlatData>(off).rows);
      expect(sortRows(ok<FlatData>(on).rows.map((r) => [r.p, r.s, r.n]))).toEqual(expected);
    } finally {
      setRollupReads(t.deps, true);
    }
  });
});
