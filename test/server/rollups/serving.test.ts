import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CacheChange } from '../../../server/kernel/app-caches';
import { openRollup } from '../../../server/rollups/serving';
import { sweepRollupObjects, rollupLoadGrace } from '../../../server/rollups/sweep';
import { insertBuild, moveBuild } from '../../../server/rollups/store';
import { sweepLostBuilds } from '../../../server/rollups/build';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import { createSalesWorld, makeSales } from '../../routers/widgets/world';
import {
  buildRollup,
  servable,
  type BuildHistory,
  type BuildPage,
  type BuildView,
  type RollupView,
} from '../../routers/rollups/world';

/*
 * What the read side is given: only enabled, built and fresh rollups, read again on every node when a build lands or
 * a definition changes (the cache bus); each load opened as its own DuckDB connector keyed rollup:<id>:<load>. The
 * sweep deletes superseded builds past their grace and the builds of deleted rollups; a queued build is cancelled.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
const owner = () => world.cast.tokens.wsAdmin!;
let rollup: RollupView;
const body = () => ({
  name: 'по товарам',
  dimensions: [{ field_id: world.fieldId('product') }],
  measures: [{ field_id: world.fieldId('qty'), aggregation: 'SUM' }],
  refresh: { mode: 'schedule', cron: '0 3 * * *' },
});
const keysOf = async () => {
  const keys: string[] = [];
  for await (const o of t.deps.storage.list(`rollups/dataset-${world.datasetId}/`)) keys.push(o.key);
  return keys.sort();
};

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(40));
  rollup = ok<RollupView>(await api.post(`/api/dataset/${world.datasetId}/rollups`, body(), owner()));
});
afterAll(() => world.dispose());

describe('servableRollups and openRollup', () => {
  it('serves a rollup once built, through its own connector, and drops it everywhere when it is disabled', async () => {
    expect(await servable(t.deps, world.datasetId)).toEqual([]);
    await buildRollup(api, owner(), world.datasetId, rollup.id);
    const [served] = await servable(t.deps, world.datasetId);
    expect(served.definition).toMatchObject({ id: rollup.id, enabled: true, refresh: { mode: 'schedule' } });
    expect(served.load.rows).toBe(5); // the five products
    const opened = await openRollup(t.deps, served);
    expect(opened.dataKey).toBe(`rollup:${rollup.id}:${served.load.id}`);
    const sums = await opened.connector.query('SELECT SUM(m0_sum) AS s FROM rollup', []);
    expect(Number(sums.rows[0][0])).toBe(makeSales(40).reduce((n, s) => n + s.qty, 0));

    const published: CacheChange[] = [];
    const spy = vi.spyOn(t.deps.caches, 'publish').mockImplementation((c) => void published.push(c));
    try {
      ok(await api.put(`/api/dataset/${world.datasetId}/rollups/${rollup.id}`, { ...body(), enabled: false }, owner()));
    } finally {
      spy.mockRestore();
    }
    expect(published).toContainEqual({ kind: 'evict', slot: 'rollups.served', key: world.datasetId });
    expect(await servable(t.deps, world.datasetId)).toEqual([]);
    ok(await api.put(`/api/dataset/${world.datasetId}/rollups/${rollup.id}`, body(), owner()));
    expect((await servable(t.deps, world.datasetId)).map((s) => s.load.id)).toEqual([served.load.id]);
  });

  it('takes the build out of service when the definition changes shape', async () => {
    const changed = ok<RollupView>(
      await api.put(
        `/api/dataset/${world.datasetId}/rollups/${rollup.id}`,
        { ...body(), measures: [{ field_id: world.fieldId('qty'), aggregation: 'MAX' }] },
        owner(),
      ),
    );
    expect(changed).toMatchObject({ rows: null, fresh: false });
    expect(await servable(t.deps, world.datasetId)).toEqual([]);
    await buildRollup(api, owner(), world.datasetId, rollup.id);
    expect(await servable(t.deps, world.datasetId)).toHaveLength(1);
  });
});

describe('sweep and cancel', () => {
  it('deletes superseded builds past their grace and keeps the current one', async () => {
    await buildRollup(api, owner(), world.datasetId, rollup.id);
    const current = (await servable(t.deps, world.datasetId))[0].load.id;
    expect((await keysOf()).length).toBeGreaterThan(1);
    t.deps.caches.replace(rollupLoadGrace, { ms: 0 });
    try {
      await sweepRollupObjects(t.deps);
    } finally {
      t.deps.caches.replace(rollupLoadGrace, { ms: 10 * 60_000 });
    }
    expect(await keysOf()).toEqual([`rollups/dataset-${world.datasetId}/rollup-${rollup.id}/${current}.duckdb`]);
  });

  it('cancels a queued build, logged in its history', async () => {
    const queued = await insertBuild(t.deps.db, {
      rollupId: rollup.id,
      datasetId: world.datasetId,
      userId: null,
      trigger: 'manual',
    });
    const path = `/api/dataset/${world.datasetId}/rollups/${rollup.id}/builds/${queued.id}`;
    expect((await api.post(`${path}/cancel`, {}, world.cast.tokens.viewer!)).status).toBe(403);
    const cancelled = ok<BuildView>(await api.post(`${path}/cancel`, {}, owner()));
    expect(cancelled).toMatchObject({ build_id: queued.id, state: 'cancelled' });
    const history = ok<BuildHistory>(await api.get(`${path}/history`, world.cast.tokens.viewer!));
    expect(history.content.map((s) => [s.state, s.message])).toEqual([['cancelled', 'Сборка отменена']]);
    const again = await api.post(`${path}/cancel`, {}, owner());
    expect(again.status).toBe(400);
    expect(failure(again).message).toBe('Сборка уже завершена (состояние cancelled): отменять нечего');
  });

  it('fails a build whose worker stopped beating, and keeps the build in service', async () => {
    const served = (await servable(t.deps, world.datasetId))[0].load.id;
    const lost = await insertBuild(t.deps.db, {
      rollupId: rollup.id,
      datasetId: world.datasetId,
      userId: null,
      trigger: 'manual',
    });
    await moveBuild(t.deps.db, lost.id, ['queued'], {
      state: 'running',
      startedAt: new Date(Date.now() - 120_000),
      heartbeatAt: new Date(Date.now() - 60_000),
    });
    await sweepLostBuilds(t.deps);
    const page = ok<BuildPage>(await api.get(`/api/dataset/${world.datasetId}/rollups/${rollup.id}/builds`, owner()));
    expect(page.content.find((b) => b.build_id === lost.id)).toMatchObject({
      state: 'failed',
      error: 'Процесс, выполнявший сборку, остановился: прежняя версия агрегата осталась в работе',
    });
    expect((await servable(t.deps, world.datasetId))[0].load.id).toBe(served);
  });

  it('deletes a rollup with its builds', async () => {
    ok(await api.delete(`/api/dataset/${world.datasetId}/rollups/${rollup.id}`, owner()));
    expect(await keysOf()).toEqual([]);
    expect(await servable(t.deps, world.datasetId)).toEqual([]);
  });
});
