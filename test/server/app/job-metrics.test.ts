import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { JobRunner, jobKind } from '../../../server/jobs/jobs';
import { jobRunDurations } from '../../../server/ops/ops';
import { useTestApp } from '../../support/app';

/**
 * GET /metrics' job figures from the job runner (server/jobs/jobs.ts): each run's duration by kind and outcome, and
 * the queues' depth as pg-boss counts it.
 */

const { t } = useTestApp();
let pool: pg.Pool | undefined;
let runner: JobRunner | undefined;
afterAll(async () => {
  await runner?.stop();
  await pool?.end();
});

const TIMED = jobKind('test-timed', z.object({ fail: z.boolean() }));

it('records every run by kind and outcome, and counts the queued jobs per kind', async () => {
  pool = new pg.Pool({ connectionString: t.databaseUrl, max: 4 });
  runner = new JobRunner(pool, { pollingIntervalSeconds: 0.5 });
  const done: boolean[] = [];
  runner.register({
    ...TIMED,
    concurrency: 1,
    handler: async ({ fail }) => {
      await new Promise((r) => setTimeout(r, 50));
      done.push(fail);
      if (fail) throw new Error('failed on purpose');
    },
  });
  expect(await runner.queueCounts()).toEqual([]);
  await runner.start();
  await runner.send(TIMED, { fail: false });
  await runner.send(TIMED, { fail: true });
  const end = Date.now() + 15_000;
  while (done.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 100));

  const series = (outcome: string) => jobRunDurations.series.get(`test-timed\u0000${outcome}`);
  expect(series('completed')).toMatchObject({ labels: { kind: 'test-timed', outcome: 'completed' }, count: 1 });
  expect(series('failed')).toMatchObject({ count: 1 });
  expect(series('completed')!.sum).toBeGreaterThanOrEqual(0.04);
  const [queue] = await runner.queueCounts();
  expect(queue).toMatchObject({ name: 'test-timed', queued: expect.any(Number), active: expect.any(Number) });
});
