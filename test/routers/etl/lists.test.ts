import { beforeAll, describe, expect, it } from 'vitest';
import { extractRuns, extractRunSteps } from '../../../db/schema/extracts';
import { useTestApp } from '../../support/app';
import { createRoleCast, uniq, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import { createPgSource } from '../widgets/world';
import type { HistoryPage, RunPage } from './world';

/*
 * The paged lists of extract runs take `sort` as every paged list does: GET /api/datasets/{id}/extracts and
 * GET /api/etl-jobs/{jobId}/history order by the field asked for, and a field they cannot order by is a 422 on sort.
 * The runs and steps are written straight into the tables, so no run has to pull anything.
 */

const { t, api } = useTestApp();
let cast: RoleCast;
let datasetId: number;
let runIds: number[];
const owner = () => cast.tokens.wsAdmin!;
const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 12, minutes));

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  const source = await createPgSource(t.deps, cast.workspaceId, cast.users.wsAdmin.id);
  datasetId = ok<{ id: number }>(
    await api.post(
      '/api/dataset',
      { name: uniq('runs'), workspace_id: cast.workspaceId, live: false, data_source_ids: [source] },
      owner(),
    ),
  ).id;
  // Inserted oldest first: ids grow with created_at; states, modes and start times in other orders.
  const rows = await t.deps.db
    .insert(extractRuns)
    .values([
      { datasetId, mode: 'incremental', trigger: 'manual', state: 'succeeded', createdAt: at(0), startedAt: at(30) },
      { datasetId, mode: 'full', trigger: 'schedule', state: 'cancelled', createdAt: at(10), startedAt: at(50) },
      { datasetId, mode: 'full', trigger: 'manual', state: 'failed', createdAt: at(20), startedAt: at(40) },
    ])
    .returning();
  runIds = rows.map((r) => r.id);
  await t.deps.db.insert(extractRunSteps).values([
    { runId: runIds[0], state: 'queued', message: 'a', at: at(0) },
    { runId: runIds[0], state: 'running', message: 'b', at: at(1) },
    { runId: runIds[0], state: 'succeeded', message: 'c', at: at(2) },
  ]);
});

describe('GET /api/datasets/{id}/extracts', () => {
  const jobIds = async (query: Record<string, string> = {}) =>
    ok<RunPage>(await api.get(`/api/datasets/${datasetId}/extracts`, owner(), query)).content.map((r) => r.job_id);
  const [a, b, c] = [0, 1, 2].map((i) => () => runIds[i]);

  it('newest first unless asked; sorts by the field asked for, both ways', async () => {
    expect(await jobIds()).toEqual([c(), b(), a()]);
    expect(await jobIds({ sort: 'job_id,asc' })).toEqual([a(), b(), c()]);
    expect(await jobIds({ sort: 'created_at,desc' })).toEqual([c(), b(), a()]);
    expect(await jobIds({ sort: 'state' })).toEqual([b(), c(), a()]);
    expect(await jobIds({ sort: 'started_at,desc' })).toEqual([b(), c(), a()]);
    expect(await jobIds({ sort: 'mode,desc' })).toEqual([a(), b(), c()]);
    expect(await jobIds({ sort: 'trigger,desc' })).toEqual([b(), a(), c()]);
    expect(await jobIds({ sort: 'job_id,asc', size: '2', page: '1' })).toEqual([c()]);
  });

  it('a field it cannot sort by is a 422 on sort', async () => {
    for (const sort of ['foo,asc', 'dataset_id', 'error,desc', 'job_id,sideways']) {
      const res = await api.get(`/api/datasets/${datasetId}/extracts`, owner(), { sort });
      expect(res.status, sort).toBe(422);
      expect(Object.keys(failure(res).errors ?? {}), sort).toEqual(['sort']);
    }
  });
});

describe('GET /api/etl-jobs/{jobId}/history', () => {
  const messages = async (query: Record<string, string> = {}) =>
    ok<HistoryPage>(await api.get(`/api/etl-jobs/${runIds[0]}/history`, owner(), query)).content.map((s) => s.message);

  it('in the order the steps happened unless asked; sorts by at or state', async () => {
    expect(await messages()).toEqual(['a', 'b', 'c']);
    expect(await messages({ sort: 'at,desc' })).toEqual(['c', 'b', 'a']);
    expect(await messages({ sort: 'state,desc' })).toEqual(['c', 'b', 'a']);
    expect(await messages({ sort: 'state,asc' })).toEqual(['a', 'b', 'c']);
  });

  it('a field it cannot sort by is a 422 on sort', async () => {
    const res = await api.get(`/api/etl-jobs/${runIds[0]}/history`, owner(), { sort: 'message,asc' });
    expect(res.status).toBe(422);
    expect(Object.keys(failure(res).errors ?? {})).toEqual(['sort']);
  });
});
