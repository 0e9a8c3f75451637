import { readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { extractLoads } from '../../../db/schema/extracts';
import { extractKeyOf, extractLoadGrace } from '../../../server/etl/loads';
import { closeLoadsOf } from '../../../server/etl/open-load';
import { sweepLostRuns } from '../../../server/etl/run-job';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { ok } from '../../support/rest';
import {
  createPgSource,
  createSalesDataset,
  createSourceTables,
  dropSourceTables,
  makeSales,
  sourceDb,
} from '../widgets/world';
import { materialise, runExtract } from './world';

/*
 * Where an extract's files live on the one-node default (STORAGE_URL unset: file://DATA_DIR/storage): each load is
 * an object extracts/dataset-<id>/<load id>.duckdb, the partial files of runs are in DATA_DIR/extracts. A full copy
 * of the source data, they go when nothing reads them any more: the dataset deleted or back on its source, and, for
 * what those miss, the sweep. An older version's extract (DATA_DIR/extracts/dataset-<id>.duckdb, no load id) keeps
 * answering and is stored as a load by the sweep.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;
const owner = () => cast.tokens.wsAdmin!;
const dir = () => path.join(t.deps.config.dataDir, 'extracts');
const localFilesOf = async (datasetId: number) =>
  (await readdir(dir()).catch(() => [] as string[])).filter((f) => f.startsWith(`dataset-${datasetId}.`)).sort();
const objectsOf = async (datasetId: number) => {
  const keys: string[] = [];
  for await (const o of t.deps.storage.list(`extracts/dataset-${datasetId}/`)) keys.push(o.key);
  return keys.sort();
};
const loadsOf = async (datasetId: number) =>
  t.deps.db.select().from(extractLoads).where(eq(extractLoads.datasetId, datasetId));

/** A materialised dataset with a loaded extract and a partial file of a run that is long gone. */
async function synchronised(): Promise<number> {
  const { id } = await createSalesDataset(api, owner(), { workspaceId: cast.workspaceId, sourceId, tables });
  await materialise(api, owner(), id);
  await runExtract(api, owner(), id);
  await writeFile(path.join(dir(), `dataset-${id}.duckdb.999999.part`), '');
  const [load] = await loadsOf(id);
  expect(await objectsOf(id)).toEqual([extractKeyOf(id, load.id)]);
  expect(await localFilesOf(id)).toEqual([`dataset-${id}.duckdb.999999.part`]);
  return id;
}

const previewRows = async (datasetId: number) =>
  ok<{ rows: unknown[][] }>(await api.post(`/api/dataset/${datasetId}/preview`, {}, owner())).rows;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
  tables = await createSourceTables(db, makeSales(10));
  sourceId = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
});
afterAll(async () => {
  await dropSourceTables(db, tables);
  await db.end();
});

describe('extract files', () => {
  it('a run stores its load in storage (moved, not copied, on this disk) and leaves no local file', async () => {
    const id = await synchronised();
    const [load] = await loadsOf(id);
    expect(load).toMatchObject({ datasetId: id, supersededAt: null });
    expect(t.deps.storage.localPath(extractKeyOf(id, load.id))).toContain(path.join(t.deps.config.dataDir, 'storage'));
    expect((await previewRows(id)).length).toBeGreaterThan(0);
  });

  it('go with the dataset: DELETE /api/dataset/{id} removes its loads and its partial files', async () => {
    const gone = await synchronised();
    const kept = await synchronised();
    ok(await api.delete(`/api/dataset/${gone}`, owner()));
    expect(await objectsOf(gone)).toEqual([]);
    expect(await localFilesOf(gone)).toEqual([]);
    expect(await objectsOf(kept)).toHaveLength(1);
  });

  it('go when the dataset is switched back to live (PUT /api/dataset/{id} live: true)', async () => {
    const id = await synchronised();
    ok(await api.put(`/api/dataset/${id}`, { live: true }, owner()));
    expect(await objectsOf(id)).toEqual([]);
    expect(await loadsOf(id)).toEqual([]);
    // Materialised again, it waits for a first synchronisation rather than serving the old copy.
    await materialise(api, owner(), id);
    const res = await api.post(`/api/dataset/${id}/preview`, {}, owner());
    expect(res.status).toBe(400);
  });

  it('the sweep removes the extracts of datasets that no longer exist and keeps those in service', async () => {
    const kept = await synchronised();
    const ghost = 2_147_000_000;
    for (const name of [`dataset-${ghost}.duckdb`, `dataset-${ghost}.duckdb.wal`, `dataset-${ghost}.duckdb.7.part`])
      await writeFile(path.join(dir(), name), '');
    const ghostKey = extractKeyOf(ghost, '00000000-0000-4000-8000-000000000000');
    await t.deps.storage.put(ghostKey, 'x');
    await writeFile(path.join(dir(), 'notes.txt'), '');
    await sweepLostRuns(t.deps);
    expect(await localFilesOf(ghost)).toEqual([]);
    expect(await objectsOf(ghost)).toEqual([]);
    // The stale partial file of the kept dataset goes (its run is not running), its load stays.
    expect(await localFilesOf(kept)).toEqual([]);
    expect(await objectsOf(kept)).toHaveLength(1);
    expect(await readdir(dir())).toContain('notes.txt');
  });

  it("an older version's extract file (no load id) answers, then the sweep stores it as a load and removes it", async () => {
    // What an older version left: the extract file itself, named by the dataset, with no row in extract_loads.
    const id = await synchronised();
    const [load] = await loadsOf(id);
    const expected = await previewRows(id);
    await rename(t.deps.storage.localPath(extractKeyOf(id, load.id))!, path.join(dir(), `dataset-${id}.duckdb`));
    await t.deps.db.delete(extractLoads).where(eq(extractLoads.id, load.id));
    await closeLoadsOf(t.deps, [id]);
    expect(await previewRows(id)).toEqual(expected);

    await sweepLostRuns(t.deps);
    const [stored] = await loadsOf(id);
    expect(stored).toMatchObject({ datasetId: id, runId: null, supersededAt: null });
    expect(await objectsOf(id)).toEqual([extractKeyOf(id, stored.id)]);
    expect(await previewRows(id)).toEqual(expected);
    // Kept while readers of this node may still hold it; gone once the load is older than the grace.
    expect(await localFilesOf(id)).toEqual([`dataset-${id}.duckdb`]);
    t.deps.caches.replace(extractLoadGrace, { ms: 0 });
    try {
      await sweepLostRuns(t.deps);
    } finally {
      t.deps.caches.replace(extractLoadGrace, { ms: 10 * 60_000 });
    }
    expect(await localFilesOf(id)).toEqual([]);
    expect(await previewRows(id)).toEqual(expected);
  });
});
