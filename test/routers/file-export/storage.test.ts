import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJobs } from '../../../db/schema/exports';
import { cleanExpiredExports } from '../../../server/file-export/run-job';
import { exportJobById } from '../../../server/file-export/store';
import { useTestApp } from '../../support/app';
import { s3StorageUrl } from '../../support/object-store';
import { createPeerApp, type PeerApp } from '../../server/app/peer-app';
import { runExport } from './jobs';
import { exportWorld, type ExportWorld } from './world';

/*
 * Export files on a cluster's store (STORAGE_URL=s3://…): an export made through node A (its worker) is downloaded
 * through node B (an api node with a data directory of its own) with the same bytes; the expiry sweep deletes the
 * object, and B then answers the 404 of an expired file. A row from before storage (an absolute DATA_DIR path) is
 * still served.
 */

const STORAGE_URL = s3StorageUrl('exports');
const { t, api } = useTestApp({ STORAGE_URL });
let w: ExportWorld;
let peer: PeerApp;

beforeAll(async () => {
  w = await exportWorld(t.deps, api, 20);
  peer = await createPeerApp(t, { STORAGE_URL });
});
afterAll(async () => {
  await peer?.close();
  await w?.close();
});

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const download = (app: PeerApp['app'], jobId: number) =>
  app.inject({
    method: 'GET',
    url: `/api/exports/${jobId}/file`,
    headers: { authorization: `Bearer ${w.cast.tokens.viewer!}` },
  });
const csv = () => ({ object_type: 'widget', object_id: w.widgetId, format: 'csv' });

describe('export files in S3 storage', () => {
  it('an export made through node A downloads through node B with the same sha256; the sweep deletes the object', async () => {
    const job = await runExport(api, w.cast.tokens.viewer!, csv());
    expect(job.state, job.error ?? '').toBe('succeeded');
    const key = (await exportJobById(t.deps.db, job.job_id))!.filePath!;
    expect(key).toMatch(new RegExp(`^exports/${job.job_id}/[\\w-]+\\.csv$`));
    // Nothing is left on A's disk: the file is in S3 only.
    expect(await fs.readdir(path.join(t.deps.config.dataDir, 'exports')).catch(() => [])).toEqual([]);

    const onA = await download(t.app, job.job_id);
    const onB = await download(peer.app, job.job_id);
    expect([onA.statusCode, onB.statusCode]).toEqual([200, 200]);
    expect(onB.headers['content-type']).toMatch(/^text\/csv/);
    expect(onB.rawPayload.length).toBe(job.size);
    expect(sha256(onB.rawPayload)).toBe(sha256(onA.rawPayload));
    expect(onB.rawPayload.toString('utf8')).toContain(w.sales[0].product);

    await t.deps.db
      .update(exportJobs)
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(exportJobs.id, job.job_id));
    await cleanExpiredExports(t.deps);
    expect(await t.deps.storage.head(key)).toBeNull();
    const gone = await download(peer.app, job.job_id);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({
      error: { message: `Файл экспорта удалён по истечении срока хранения (задание ${job.job_id})` },
    });
  }, 60_000);

  it('a job row from before storage (an absolute path under DATA_DIR/exports) is still downloaded', async () => {
    const job = await runExport(api, w.cast.tokens.viewer!, csv());
    const key = (await exportJobById(t.deps.db, job.job_id))!.filePath!;
    const legacy = path.join(t.deps.config.dataDir, 'exports', `${crypto.randomUUID()}.csv`);
    await t.deps.storage.getToFile(key, legacy);
    await t.deps.storage.delete(key);
    await t.deps.db.update(exportJobs).set({ filePath: legacy }).where(eq(exportJobs.id, job.job_id));
    const res = await download(t.app, job.job_id);
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(sha256(await fs.readFile(legacy)));
  }, 60_000);
});
