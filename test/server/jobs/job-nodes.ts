import pg from 'pg';
import { afterAll } from 'vitest';
import { JobRunner } from '../../../server/jobs/jobs';
import { useTestApp } from '../../support/app';

/**
 * Job runners as separate nodes on the test database, each with its own pool (named, so its sessions can be found and
 * terminated), all stopped and their pools ended after the file's tests.
 */
export function useJobNodes() {
  const { t } = useTestApp();
  const pools: pg.Pool[] = [];
  const runners: JobRunner[] = [];
  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const p of pools) await p.end().catch(() => undefined);
  });
  return {
    t,
    node(opts: { name: string; work: boolean; pollingIntervalSeconds: number }) {
      const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 4, application_name: opts.name });
      pool.on('error', () => undefined);
      pools.push(pool);
      const runner = new JobRunner(pool, { work: opts.work, pollingIntervalSeconds: opts.pollingIntervalSeconds });
      runners.push(runner);
      return { pool, runner };
    },
    /** A pool of the test's own, ended with the others. */
    pool() {
      const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
      pools.push(pool);
      return pool;
    },
  };
}
