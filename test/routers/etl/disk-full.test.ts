import { execFile } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { MSG } from '../../../server/etl/messages';
import type { NotificationView } from '../../../server/notifications/notifications';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import { createPgSource, sourceDb, type FlatData, type WidgetView } from '../widgets/world';
import { createObjectDataset, materialise, runExtract } from './world';

/*
 * Disk full while a run writes its files: the extracts folder is a 4 MB tmpfs (mounted by the test, which needs
 * root; skipped otherwise), big enough for the first small extract and too small for the grown source. The run
 * fails with a message saying the disk is full, its user is notified, the previous extract answers and no partial
 * file is left.
 */

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const table = uniq('x_full');
let mounted = '';
let datasetId: number;
let widgetId: number;
const owner = () => cast.tokens.wsAdmin!;

const extractsDir = () => path.join(t.deps.config.dataDir, 'extracts');
const leftovers = async () => (await readdir(extractsDir())).filter((f) => f.includes('.part'));
const counted = async () => ok<FlatData>(await api.post(`/api/widget/${widgetId}/data`, {}, owner())).rows;

beforeAll(async () => {
  if (!isRoot) return;
  await mkdir(extractsDir(), { recursive: true });
  await run('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', extractsDir()]);
  mounted = extractsDir();
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  await db.query(`CREATE TABLE ${table} AS SELECT g AS id, 'small ' || g AS label FROM generate_series(1, 100) g`);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = await createObjectDataset(api, owner(), {
    name: uniq('full'),
    workspaceId: cast.workspaceId,
    sourceId: source,
    object: { name: 'full', schema: 'public', table },
    columns: [
      ['id', 'integer'],
      ['label', 'string'],
    ],
  });
  await materialise(api, owner(), datasetId);
  widgetId = ok<WidgetView>(
    await api.post(
      '/api/widget',
      { name: 'w', type: 'table', dataset_id: datasetId, rows: [], columns: [{ id: 'n', sql: 'COUNT([full.id])' }] },
      owner(),
    ),
  ).id;
});
// Registered after useTestApp: runs before the app removes its DATA_DIR. Lazy, because the extract's DuckDB file
// may still be open in the app's connector cache.
afterAll(async () => {
  if (mounted) await run('umount', ['-l', mounted]);
  if (db) {
    await db.query(`DROP TABLE IF EXISTS ${table}`);
    await db.end();
  }
});

describe.skipIf(!isRoot)('disk full during a run', () => {
  it('fails with a disk-full message; the previous extract answers and no partial file is left', async () => {
    await runExtract(api, owner(), datasetId);
    expect(await counted()).toEqual([{ n: 100 }]);

    // About 20 MB of text that hardly compresses (hex digests): more than the folder holds, in any file format.
    await db.query(
      `INSERT INTO ${table} SELECT g, md5(g::text) || md5((-g)::text) FROM generate_series(101, 300000) g`,
    );
    const failed = await runExtract(api, owner(), datasetId, {}, 'failed');
    expect(failed.error).toBe(MSG.diskFull);
    const notices = ok<{ content: NotificationView[] }>(await api.get('/api/notifications?size=100', owner())).content;
    expect(notices.find((n) => n.object_id === failed.job_id)).toMatchObject({
      kind: 'extract_failed',
      message: MSG.failed(failed.error!),
    });
    expect(await counted()).toEqual([{ n: 100 }]);
    expect(await leftovers()).toEqual([]);
  });
});
