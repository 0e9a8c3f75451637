import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportJobById } from '../../../server/file-export/store';
import { useTestApp } from '../../support/app';
import { createPeerApp, type PeerApp } from '../../server/app/peer-app';
import { startExport, waitExport } from './jobs';
import { exportWorld, type ExportWorld } from './world';

/*
 * An export whose node stops (SIGTERM: its job runner stops) is handed to another worker rather than cancelled: the
 * stopping node leaves the export running and fails its pg-boss job on purpose, a peer worker on the same database
 * runs it again from the start, and the file is made.
 */

const { t, api } = useTestApp();
let w: ExportWorld;
let peer: PeerApp;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 20);
  peer = await createPeerApp(t, { NODE_ROLE: 'worker' });
});
afterAll(async () => {
  await peer.close();
  await w.close();
});

it('a node stopped mid-export hands the export to a live worker, which makes the file', async () => {
  const viewer = w.cast.tokens.viewer!;
  await w.source.db.query('BEGIN');
  let locked = true;
  try {
    await w.source.db.query(`LOCK TABLE ${w.source.sales} IN ACCESS EXCLUSIVE MODE`);
    const id = await startExport(api, viewer, { object_type: 'widget', object_id: w.widgetId, format: 'csv' });
    for (let i = 0; (await exportJobById(t.deps.db, id))?.state !== 'running'; i++) {
      if (i > 300) throw new Error('the export never ran');
      await new Promise((r) => setTimeout(r, 100));
    }
    await peer.deps.jobs.start();
    const stoppedAt = Date.now();
    await t.deps.jobs.stop();
    // Left for another node: neither cancelled nor failed.
    expect((await exportJobById(t.deps.db, id))?.state).toMatch(/^(running|queued)$/);
    await w.source.db.query('ROLLBACK');
    locked = false;
    const job = await waitExport(api, viewer, id, 60_000);
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(Date.now() - stoppedAt).toBeLessThan(60_000);
  } finally {
    if (locked) await w.source.db.query('ROLLBACK');
  }
}, 120_000);
