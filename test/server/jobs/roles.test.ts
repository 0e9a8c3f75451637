import type pg from 'pg';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { jobKind, type JobKind } from '../../../server/jobs/jobs';
import { useJobNodes } from './job-nodes';

/*
 * The job runner across nodes, on one database: an api node (work: false) sends and schedules but runs nothing (no
 * handler, start hook or periodic sweep); a worker runs what it sent. A worker that dies mid-job (its pool gone, its
 * sessions terminated, so neither its heartbeat nor anything else reaches the database) loses the job to a live
 * worker, which runs it again within a minute; the retries are bounded by the kind's retryLimit.
 */

const jobNodes = useJobNodes();

const PING = jobKind('test-ping', z.object({ n: z.number() }));

/** A node: its own pool (named, so its sessions can be found) and runner, with PING registered. */
function node(name: string, work: boolean, handler: JobKind<{ n: number }>['handler'], retryLimit = 0) {
  const { pool, runner } = jobNodes.node({ name, work, pollingIntervalSeconds: 0.5 });
  runner.register({ ...PING, concurrency: 1, retryLimit, heartbeatSeconds: 10, handler });
  const seen = { hooks: 0, sweeps: 0 };
  runner.onStart(async () => void seen.hooks++);
  runner.every('test-sweep', 100, async () => void seen.sweeps++);
  return { pool, runner, seen };
}

const until = async (what: () => boolean | Promise<boolean>, ms: number, label: string) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out: ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

it('an api node sends and schedules, runs nothing; a worker runs what it sent', async () => {
  const ran: number[] = [];
  const api = node('test-api', false, async (p) => void ran.push(p.n));
  const id = await api.runner.send(PING, { n: 1 });
  await api.runner.schedule(PING, 'every-minute', '* * * * *', 'UTC', { n: 2 });
  await new Promise((r) => setTimeout(r, 1_500));
  expect(ran).toEqual([]);
  expect(api.seen).toEqual({ hooks: 0, sweeps: 0 });
  expect(await api.runner.stateOf(PING, id)).toBe('created');
  // The kind's policy is the queue's, whichever node made it.
  const boss = await api.runner.start();
  expect(await boss.getQueue(PING.name)).toMatchObject({ retryLimit: 0, heartbeatSeconds: 10 });

  const worker = node('test-worker', true, async (p) => void ran.push(p.n));
  await worker.runner.start();
  await until(() => ran.includes(1), 10_000, 'the worker runs the api node’s job');
  expect(worker.seen.hooks).toBe(1);
  await until(() => worker.seen.sweeps >= 2, 5_000, 'the worker’s periodic sweep runs again and again');
  await until(async () => (await api.runner.stateOf(PING, id)) === 'completed', 5_000, 'completed');
  await api.runner.unschedule(PING, 'every-minute');
  await worker.runner.stop();
  await api.runner.stop();
});

it('a job whose worker dies is run again by a live worker within a minute, at most retryLimit times', async () => {
  const admin = jobNodes.pool();
  /** The node dies as a machine does: nothing more leaves it (no heartbeat, no query), its sessions end. */
  const kill = async (name: string, pool: pg.Pool) => {
    void pool.end();
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name]);
  };
  const started: string[] = [];
  const takes = (who: string) => async (p: { n: number }) => {
    if (p.n !== 7) return; // a job of the schedule above
    started.push(who);
    return new Promise<void>(() => undefined); // works until its node dies
  };
  // retryLimit 1: the job runs twice at most, here on two workers that both die with it in hand.
  const a = node('test-dies-a', true, takes('a'), 1);
  await a.runner.start();
  const id = await a.runner.send(PING, { n: 7 });
  await until(() => started.includes('a'), 10_000, 'a takes the job');
  const b = node('test-dies-b', true, takes('b'), 1);
  await b.runner.start();
  await new Promise((r) => setTimeout(r, 1_000));
  expect(started).toEqual(['a']); // b takes it only once a is gone
  let diedAt = Date.now();
  await kill('test-dies-a', a.pool);
  await until(() => started.includes('b'), 60_000, 'b runs the job again');
  expect(Date.now() - diedAt).toBeLessThan(60_000);

  // A live worker finds b dead too: the retries are spent, so the job is failed, not run a third time.
  const c = node('test-lives-c', true, takes('c'), 1);
  await c.runner.start();
  diedAt = Date.now();
  await kill('test-dies-b', b.pool);
  await until(async () => (await c.runner.stateOf(PING, id)) === 'failed', 60_000, 'the job failed');
  expect(Date.now() - diedAt).toBeLessThan(60_000);
  await new Promise((r) => setTimeout(r, 1_000));
  expect(started).toEqual(['a', 'b']);
}, 150_000);
