import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportJobById } from '../../../server/file-export/store';
import { useTestApp } from '../../support/app';
import { nodeCall, startNodeProcess, type NodeProcess } from '../../server/jobs/node-process';
import { runExport, waitExport } from './jobs';
import { exportWorld, type ExportWorld } from './world';

/*
 * An export whose node dies re-runs on a live worker: a node process takes the export and reads the source (the
 * sales table is locked, so the read waits), and is killed with SIGKILL. The test's own app, a worker on the same
 * database whose jobs already run, finds the dead node's job without a heartbeat, runs it again from the start, and
 * the file is made within a minute of the death.
 */

const key = crypto.randomBytes(32).toString('base64');
const { t, api } = useTestApp({ SECRETS_KEY: key });
let w: ExportWorld;
let node: NodeProcess | undefined;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 20);
});
afterAll(async () => {
  await node?.kill();
  await w.close();
});

async function waitState(id: number, state: string, ms = 30_000) {
  const until = Date.now() + ms;
  while ((await exportJobById(t.deps.db, id))?.state !== state) {
    if (Date.now() > until) throw new Error(`export ${id} never ${state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('a node killed mid-export: a live worker runs the export again within a minute, and it succeeds', async () => {
  node = await startNodeProcess({ DATABASE_URL: t.databaseUrl, SECRETS_KEY: key });
  const viewer = w.cast.tokens.viewer!;
  await w.source.db.query('BEGIN');
  let locked = true;
  try {
    await w.source.db.query(`LOCK TABLE ${w.source.sales} IN ACCESS EXCLUSIVE MODE`);
    const { job_id } = await nodeCall<{ job_id: number }>(node, 'POST', '/api/exports', viewer, {
      object_type: 'widget',
      object_id: w.widgetId,
      format: 'csv',
    });
    // The node holds the job (running, its read waiting at the source) before the peer's workers start.
    await waitState(job_id, 'running');
    await t.deps.jobs.start();
    await node.kill();
    const diedAt = Date.now();
    await w.source.db.query('ROLLBACK');
    locked = false;
    const job = await waitExport(api, viewer, job_id, 90_000);
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(Date.parse(job.finished_at!) - diedAt).toBeLessThan(60_000);
    const file = await api.get(`/api/exports/${job_id}/file`, viewer);
    expect(file.status).toBe(200);
    // The same file as an export that never lost its node: the lost attempt left nothing behind.
    const again = await runExport(api, viewer, { object_type: 'widget', object_id: w.widgetId, format: 'csv' });
    expect(String(file.body)).toBe(String((await api.get(`/api/exports/${again.job_id}/file`, viewer)).body));
  } finally {
    if (locked) await w.source.db.query('ROLLBACK');
  }
}, 180_000);
