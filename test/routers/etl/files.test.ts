import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { startExtractJobs } from '../../../server/etl/run-job';
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
 * The extract files of a dataset (DATA_DIR/extracts/dataset-<id>.duckdb, its WAL and the partial files of its runs), a
 * full copy of the source data, go when nothing reads them any more: the dataset deleted or back on its source, and,
 * for what those miss, the sweep.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
let tables: { sales: string; regions: string };
let sourceId: number;
const owner = () => cast.tokens.wsAdmin!;
const dir = () => path.join(t.deps.config.dataDir, 'extracts');
const filesOf = async (datasetId: number) =>
  (await readdir(dir()).catch(() => [] as string[])).filter((f) => f.startsWith(`dataset-${datasetId}.`)).sort();

/** A materialised dataset with a loaded extract, a WAL and a partial file of a run that is long gone. */
async function synchronised(): Promise<number> {
  const { id } = await createSalesDataset(api, owner(), { workspaceId: cast.workspaceId, sourceId, tables });
  await materialise(api, owner(), id);
  await runExtract(api, owner(), id);
  await writeFile(path.join(dir(), `dataset-${id}.duckdb.wal`), '');
  await writeFile(path.join(dir(), `dataset-${id}.duckdb.999999.part`), '');
  expect(await filesOf(id)).toEqual([
    `dataset-${id}.duckdb`,
    `dataset-${id}.duckdb.999999.part`,
    `dataset-${id}.duckdb.wal`,
  ]);
  return id;
}

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
  it('go with the dataset: DELETE /api/dataset/{id} removes the extract, its WAL and its partial files', async () => {
    const gone = await synchronised();
    const kept = await synchronised();
    ok(await api.delete(`/api/dataset/${gone}`, owner()));
    expect(await filesOf(gone)).toEqual([]);
    expect(await filesOf(kept)).toContain(`dataset-${kept}.duckdb`);
  });

  it('go when the dataset is switched back to live (PUT /api/dataset/{id} live: true)', async () => {
    const id = await synchronised();
    ok(await api.put(`/api/dataset/${id}`, { live: true }, owner()));
    expect(await filesOf(id)).toEqual([]);
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
    await writeFile(path.join(dir(), 'notes.txt'), '');
    await startExtractJobs(t.deps);
    expect(await filesOf(ghost)).toEqual([]);
    // The stale partial file of the kept dataset goes (its run is not running), its extract and WAL stay.
    expect(await filesOf(kept)).toEqual([`dataset-${kept}.duckdb`, `dataset-${kept}.duckdb.wal`]);
    expect(await readdir(dir())).toContain('notes.txt');
  });
});
