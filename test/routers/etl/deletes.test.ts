import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { eq } from 'drizzle-orm';
import type pg from 'pg';
import { datasets } from '../../../db/schema/datasets';
import { MSG } from '../../../server/etl/messages';
import { EXTRACT_RUN } from '../../../server/etl/run-job';
import { runById } from '../../../server/etl/store';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createPgSource, sourceDb } from '../widgets/world';
import { createPipelineWorld, deploy, type DeployResult } from '../pipelines/deploy-world';
import { createObjectDataset, materialise, waitForRun, type HistoryPage, type RunPage, type RunView } from './world';

/*
 * A run whose dataset goes away or back on its source while it pulls: DELETE /api/dataset/{id}, PUT /api/dataset/{id}
 * live: true and DELETE /api/workspaces/{id} end the run (it no longer exists, or is cancelled with the reason), its
 * query at the source stops, its partial files go and its job ends without an error. A run deleted by any other path
 * stops through its heartbeat alone, and a start racing the switch to live leaves no run going. A source with a
 * dataset on it cannot be deleted at all (DELETE /api/data-source/{id} answers 400), so no run is left on a deleted
 * source. The source is a view that sleeps on every row (about 400 rows a second): a pull that would last for most of
 * an hour, whose rows arrive in batches of 256 KiB (the first after a minute).
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let db: pg.Client;
const views: string[] = [];
const owner = () => cast.tokens.wsAdmin!;
let errors: MockInstance<typeof console.error>;

/**
 * Backends of the source with a query over the view under way (the pull's COPY and the count beside it, a cursor whose
 * FETCH does not show the view): their transaction holds a lock on the view until it ends.
 */
async function sourceQueries(view: string): Promise<number> {
  const r = await db.query(
    `SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l WHERE l.relation = $1::regclass AND l.pid <> pg_backend_pid()`,
    [view],
  );
  return r.rows[0].n as number;
}

/** The pull's COPY of the view runs at the source. */
async function copying(view: string): Promise<boolean> {
  const r = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE state = 'active' AND query LIKE 'COPY%' AND query LIKE $1 AND pid <> pg_backend_pid()`,
    [`%${view}%`],
  );
  return (r.rows[0].n as number) > 0;
}

async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const filesOf = async (datasetId: number) =>
  (await readdir(path.join(t.deps.config.dataDir, 'extracts')).catch(() => [] as string[])).filter((f) =>
    f.startsWith(`dataset-${datasetId}.`),
  );

/** Who builds the slow datasets: the role cast's workspace administrator unless a test brings its own. */
interface Builder {
  userId: number;
  token: string;
}
const castBuilder = (): Builder => ({ userId: cast.users.wsAdmin.id, token: owner() });

/** A materialised dataset over a slow view of its own. */
async function slowDataset(
  workspaceId: number,
  by: Builder = castBuilder(),
): Promise<{ datasetId: number; view: string }> {
  const view = uniq('x_slow');
  views.push(view);
  await db.query(
    `CREATE VIEW ${view} AS SELECT g AS id FROM generate_series(1, 1000000) g WHERE pg_sleep(0.001)::text = ''`,
  );
  const sourceId = await createPgSource(t.deps, workspaceId, by.userId);
  const datasetId = await createObjectDataset(api, by.token, {
    name: uniq('slow'),
    workspaceId,
    sourceId,
    object: { name: 'slow', schema: 'public', table: view },
    columns: [['id', 'integer']],
  });
  await materialise(api, by.token, datasetId);
  return { datasetId, view };
}

/** A synchronisation of the dataset under way at the source (its COPY of the view running, its partial file made). */
async function startPull(datasetId: number, view: string, token = owner()): Promise<{ run: RunView; job: string }> {
  const started = ok<RunView>(await api.post(`/api/datasets/${datasetId}/extracts`, {}, token));
  const run = await waitForRun(api, token, started.job_id, (r) => r.state === 'running');
  expect(await eventually(() => copying(view), 20_000)).toBe(true);
  expect((await filesOf(datasetId)).some((f) => f.includes('.part'))).toBe(true);
  return { run, job: (await runById(t.deps.db, run.job_id))!.bossJobId! };
}

/** A materialised dataset over a slow view of its own, with a run under way at the source. */
async function slowRun(workspaceId: number): Promise<{ datasetId: number; run: RunView; view: string; job: string }> {
  const { datasetId, view } = await slowDataset(workspaceId);
  return { datasetId, view, ...(await startPull(datasetId, view)) };
}

/** The run's query at the source, its partial files and its job are all gone within a few seconds. */
async function expectStopped(s: { datasetId: number; view: string; job: string }) {
  expect(await eventually(async () => (await sourceQueries(s.view)) === 0)).toBe(true);
  expect(await eventually(async () => (await filesOf(s.datasetId)).length === 0)).toBe(true);
  // The job's handler returned (completed) rather than running on or throwing (failed).
  expect(await eventually(async () => (await t.deps.jobs.stateOf(EXTRACT_RUN, s.job)) === 'completed')).toBe(true);
}

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  db = await sourceDb();
});
afterAll(async () => {
  for (const view of views) {
    // A pull left running (a failed test) would hold the view: ended first.
    await db.query(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE relation = $1::regclass AND pid <> pg_backend_pid()`,
      [view],
    );
    await db.query(`DROP VIEW IF EXISTS ${view}`);
  }
  await db.end();
});
beforeEach(() => {
  errors = vi.spyOn(console, 'error');
});
afterEach(() => {
  // Nothing of the worker failed meanwhile (a step written for a run that is gone, a foreign key refused).
  expect(errors.mock.calls).toEqual([]);
  errors.mockRestore();
});

describe('a run whose dataset goes while it pulls', () => {
  it('DELETE /api/dataset/{id}: 200, the run and its query at the source are gone', async () => {
    const s = await slowRun(cast.workspaceId);
    ok(await api.delete(`/api/dataset/${s.datasetId}`, owner()));
    await expectStopped(s);
    expect((await api.get(`/api/etl-jobs/${s.run.job_id}`, owner())).status).toBe(404);
    expect((await api.post(`/api/etl-jobs/${s.run.job_id}/cancel`, undefined, owner())).status).toBe(404);
    expect(await runById(t.deps.db, s.run.job_id)).toBeNull();
  });

  it('PUT /api/dataset/{id} live: true: the run is cancelled with the reason, its query at the source stops', async () => {
    const s = await slowRun(cast.workspaceId);
    ok(await api.put(`/api/dataset/${s.datasetId}`, { live: true }, owner()));
    await expectStopped(s);
    const runs = ok<RunPage>(await api.get(`/api/datasets/${s.datasetId}/extracts`, owner()));
    expect(runs.content).toHaveLength(1);
    expect(runs.content[0]).toMatchObject({ job_id: s.run.job_id, state: 'cancelled' });
    expect(runs.content[0].finished_at).toBeTruthy();
    const history = ok<HistoryPage>(await api.get(`/api/etl-jobs/${s.run.job_id}/history`, owner()));
    expect(history.content.at(-1)).toMatchObject({ state: 'cancelled', message: MSG.cancelledLive });
    // Nothing was written after the cancel (a step of an object loaded, a failure).
    expect(history.content.filter((step) => step.state === 'cancelled')).toHaveLength(1);
    // Back on its source, it reads live; materialised again, it can be synchronised.
    const again = await api.post(`/api/datasets/${s.datasetId}/extracts`, {}, owner());
    expect(failure(again).message).toBe(MSG.liveDataset(s.datasetId).message);
  });

  it('DELETE /api/workspaces/{id}: 200, the runs of its datasets and their queries at the source are gone', async () => {
    const ws = await cast.newWorkspace();
    const s = await slowRun(ws);
    ok(await api.delete(`/api/workspaces/${ws}`, owner()));
    await expectStopped(s);
    expect((await api.get(`/api/etl-jobs/${s.run.job_id}`, owner())).status).toBe(404);
    expect(await runById(t.deps.db, s.run.job_id)).toBeNull();
  });

  it('a run gone by any other path (another node, a cascade): its heartbeat finds it gone and stops the pull', async () => {
    const s = await slowRun(cast.workspaceId);
    // Straight in the database, as another node's delete or a cascade from elsewhere: nothing aborts it here.
    await t.deps.db.delete(datasets).where(eq(datasets.id, s.datasetId));
    await expectStopped(s);
  });

  it('a start racing PUT /api/dataset/{id} live: true leaves no run going on a live dataset', async () => {
    const { datasetId, view } = await slowDataset(cast.workspaceId);
    for (let i = 0; i < 5; i++) {
      const [start] = await Promise.all([
        api.post(`/api/datasets/${datasetId}/extracts`, {}, owner()),
        api.put(`/api/dataset/${datasetId}`, { live: true }, owner()),
      ]);
      // The start came first (its run is cancelled by the switch) or second (refused: the dataset is live).
      if (start.status !== 200) expect(failure(start).message).toBe(MSG.liveDataset(datasetId).message);
      expect(
        await eventually(async () => {
          const runs = ok<RunPage>(await api.get(`/api/datasets/${datasetId}/extracts?size=100`, owner()));
          return runs.content.every((r) => r.state === 'cancelled');
        }),
      ).toBe(true);
      expect(await eventually(async () => (await sourceQueries(view)) === 0)).toBe(true);
      await materialise(api, owner(), datasetId);
    }
  });

  it("a deploy that puts a materialised copy back on its source ends the copy's run, as PUT live: true does", async () => {
    const w = await createPipelineWorld(t.deps, api);
    const builder = { userId: w.admin.id, token: w.tokens.admin };
    const { datasetId: original, view } = await slowDataset(w.stages[0], builder);
    const first = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: original }] }),
    );
    const copy = first.objects.find((o) => o.type === 'dataset')!.target_id;
    const pull = await startPull(copy, view, w.tokens.admin);
    ok(await api.put(`/api/dataset/${original}`, { live: true }, w.tokens.admin));
    const again = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: original }] }),
    );
    expect(again.objects.find((o) => o.type === 'dataset')).toMatchObject({ target_id: copy, action: 'updated' });
    await expectStopped({ datasetId: copy, view, job: pull.job });
    const runs = ok<RunPage>(await api.get(`/api/datasets/${copy}/extracts`, w.tokens.admin));
    expect(runs.content[0]).toMatchObject({ job_id: pull.run.job_id, state: 'cancelled', error: MSG.cancelledLive });
  });

  it('DELETE /api/data-source/{id} of a dataset that pulls is refused: the dataset is on it', async () => {
    const s = await slowRun(cast.workspaceId);
    const dataset = ok<{ data_source_ids: number[] }>(await api.get(`/api/dataset/${s.datasetId}`, owner()));
    const res = await api.delete(`/api/data-source/${dataset.data_source_ids[0]}`, owner());
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/^Источник нельзя удалить: на нём построены датасеты \(1\)/);
    expect((await runById(t.deps.db, s.run.job_id))?.state).toBe('running');
    ok(await api.post(`/api/etl-jobs/${s.run.job_id}/cancel`, undefined, owner()));
    expect(await eventually(async () => (await sourceQueries(s.view)) === 0)).toBe(true);
  });
});
