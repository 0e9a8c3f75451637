import { expect, it } from 'vitest';
import { z } from 'zod';
import { jobKind } from '../../../server/jobs/jobs';
import { useJobNodes } from './job-nodes';

/*
 * A job sent on one node wakes an idle worker on another at once (pg-boss's LISTEN/NOTIFY on the queues' `notify`),
 * so workers may poll rarely: here the base interval is 10 s, and each job still starts within a fraction of it.
 */

const jobNodes = useJobNodes();

const WAKE = jobKind('test-wake', z.object({ n: z.number() }));

function node(name: string, work: boolean, handler: (n: number) => void) {
  const { runner } = jobNodes.node({ name, work, pollingIntervalSeconds: 10 });
  runner.register({ ...WAKE, concurrency: 1, handler: async (p) => handler(p.n) });
  return runner;
}

it('a job sent on another node starts within a second, though the workers poll every 10 s', async () => {
  const started = new Map<number, number>();
  const worker = node('test-wake-worker', true, (n) => void started.set(n, Date.now()));
  const api = node('test-wake-api', false, () => undefined);
  await worker.start();
  await api.start();
  // Past the first polls of the start, so that only a NOTIFY can wake the worker this soon.
  await new Promise((r) => setTimeout(r, 1_500));
  for (const n of [1, 2, 3]) {
    const sent = Date.now();
    await api.send(WAKE, { n });
    const end = sent + 5_000;
    while (!started.has(n) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(started.get(n)! - sent, `job ${n}`).toBeLessThan(1_000);
  }
});
