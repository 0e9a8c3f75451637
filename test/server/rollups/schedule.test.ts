import { afterAll, beforeAll, expect, it } from 'vitest';
import { rollupJobKinds } from '../../../server/rollups/rollups';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import { createSalesWorld, makeSales } from '../../routers/widgets/world';
import { waitForBuild, type BuildPage, type RollupView } from '../../routers/rollups/world';

/*
 * A rollup refreshed on its own cron: when its schedule fires (the pg-boss schedule's job), a build is queued with
 * trigger 'schedule' and ends with a notification to the dataset's author; a disabled rollup's schedule queues nothing.
 */

const { t, api } = useTestApp();
let world: Awaited<ReturnType<typeof createSalesWorld>>;
const owner = () => world.cast.tokens.wsAdmin!;
const fire = (rollupId: number) => {
  const kind = rollupJobKinds(t.deps).find((k) => k.name === 'rollup-schedule')!;
  const controller = new AbortController();
  return (kind.handler as (p: { rollupId: number }, ctx: unknown) => Promise<void>)(
    { rollupId },
    { jobId: 'test', signal: controller.signal, nodeStopping: () => false },
  );
};

beforeAll(async () => {
  world = await createSalesWorld(t.deps, api, makeSales(20));
});
afterAll(() => world.dispose());

it('builds on its schedule, notifies the author, and not while disabled', async () => {
  const body = {
    name: 'по расписанию',
    dimensions: [{ field_id: world.fieldId('product') }],
    measures: [{ field_id: world.fieldId('qty'), aggregation: 'COUNT' }],
    refresh: { mode: 'schedule', cron: '15 4 * * 1', timezone: 'Asia/Tokyo' },
  };
  const rollup = ok<RollupView>(await api.post(`/api/dataset/${world.datasetId}/rollups`, body, owner()));
  expect(rollup.refresh).toEqual({ mode: 'schedule', cron: '15 4 * * 1', timezone: 'Asia/Tokyo' });
  const builds = () =>
    api.get(`/api/dataset/${world.datasetId}/rollups/${rollup.id}/builds`, owner()).then((r) => ok<BuildPage>(r));

  await fire(rollup.id);
  const [queued] = (await builds()).content;
  expect(queued.trigger).toBe('schedule');
  expect(queued.user_id).toBeNull();
  const done = await waitForBuild(api, owner(), world.datasetId, rollup.id, queued.build_id);
  expect(done).toMatchObject({ state: 'succeeded', rows: 5 });
  const notices = ok<{
    content: { kind: string; object_type: string | null; object_id: number | null; title: string }[];
  }>(await api.get('/api/notifications', owner()));
  expect(notices.content).toContainEqual(
    expect.objectContaining({
      kind: 'rollup_succeeded',
      object_type: 'rollup_build',
      object_id: queued.build_id,
      title: 'Агрегат «по расписанию» собран',
    }),
  );

  ok(await api.put(`/api/dataset/${world.datasetId}/rollups/${rollup.id}`, { ...body, enabled: false }, owner()));
  await fire(rollup.id);
  expect((await builds()).content).toHaveLength(1);
});
