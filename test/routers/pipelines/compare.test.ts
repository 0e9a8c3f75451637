import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { pipelineObjectLinks } from '../../../db/schema/pipelines';
import type { widgetView } from '../../../routers/widgets/schemas';
import { useTestApp } from '../../support/app';
import { addWorkspaceMember, createUser, login, uniq } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import {
  compare,
  createPipelineWorld,
  createStageObjects,
  deploy,
  statuses,
  type CompareResult,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
} from './deploy-world';

type Widget = z.output<typeof widgetView>;

const { t, api } = useTestApp();
const disposals: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of disposals) await d();
});

async function world(): Promise<{ w: PipelineWorld; dev: StageObjects }> {
  const w = await createPipelineWorld(t.deps, api);
  const dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
  disposals.push(dev.dispose);
  return { w, dev };
}

const keys = (dev: StageObjects) => ({
  source: `data_source:${dev.sourceId}`,
  dataset: `dataset:${dev.datasetId}`,
  widget: `widget:${dev.widgetId}`,
  dashboard: `dashboard:${dev.dashboardId}`,
});
const deployAll = async (w: PipelineWorld) => ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
/** PUT /api/widget/{id} with what it already has: a save without real change. */
async function saveUnchanged(id: number, token: string) {
  const w = ok<Widget>(await api.get(`/api/widget/${id}`, token));
  ok(
    await api.put(
      `/api/widget/${id}`,
      { name: w.name, type: w.type, dataset_id: w.dataset_id, rows: w.rows, columns: w.columns, sorts: w.sorts },
      token,
    ),
  );
}

describe('GET /api/pipeline/{id}/compare: the comparison status table', () => {
  let w: PipelineWorld;
  let dev: StageObjects;
  let k: ReturnType<typeof keys>;
  let first: DeployResult;
  beforeAll(async () => {
    ({ w, dev } = await world());
    k = keys(dev);
  });

  it('before any deploy every object of the stage is new', async () => {
    const res = ok<CompareResult>(await compare(api, w, '0'));
    expect(res).toMatchObject({ pipeline_id: w.pipelineId, from_stage: 0, to_stage: 1 });
    expect(res.objects.map((o) => [o.type, o.status, o.target_id])).toEqual([
      ['data_source', 'new', null],
      ['dataset', 'new', null],
      ['widget', 'new', null],
      ['dashboard', 'new', null],
    ]);
  });

  it('new -> deploy -> same; a data source original is changed at once after its first deploy', async () => {
    first = await deployAll(w);
    expect(await statuses(api, w)).toEqual({
      [k.source]: 'changed',
      [k.dataset]: 'same',
      [k.widget]: 'same',
      [k.dashboard]: 'same',
    });
    const res = ok<CompareResult>(await compare(api, w, '0'));
    expect(res.objects.map((o) => o.target_id)).toEqual(first.objects.map((o) => o.target_id));
  });

  it('same -> a save without real change -> changed; changed -> deploy -> same (the source too)', async () => {
    await saveUnchanged(dev.widgetId, w.tokens.admin);
    expect((await statuses(api, w))[k.widget]).toBe('changed');
    expect((await statuses(api, w))[k.dataset]).toBe('same');
    await deployAll(w);
    expect(await statuses(api, w)).toEqual({
      [k.source]: 'same',
      [k.dataset]: 'same',
      [k.widget]: 'same',
      [k.dashboard]: 'same',
    });
  });

  it('target_only: an object created in the next stage itself', async () => {
    const own = ok<{ id: number }>(
      await api.post('/api/dataset', { name: uniq('own'), workspace_id: w.stages[1] }, w.tokens.admin),
    );
    const res = ok<CompareResult>(await compare(api, w, '0'));
    expect(res.objects.find((o) => o.id === own.id && o.type === 'dataset')).toMatchObject({
      status: 'target_only',
      target_id: own.id,
    });
    // Copies are not target_only while their originals live.
    expect(res.objects.filter((o) => o.status === 'target_only')).toHaveLength(1);
  });

  it('a deleted copy: its original is new again; a deleted original: its copy is target_only (never a 500)', async () => {
    const copy = first.objects.find((o) => o.type === 'dashboard')!.target_id;
    ok(await api.delete(`/api/dashboard/${copy}`, w.tokens.admin));
    expect((await statuses(api, w))[k.dashboard]).toBe('new');
    const redeployed = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dashboard', id: dev.dashboardId }] }),
    );
    expect(redeployed.objects.find((o) => o.type === 'dashboard')?.action).toBe('created');
    ok(await api.delete(`/api/dashboard/${dev.dashboardId}`, w.tokens.admin));
    const res = ok<CompareResult>(await compare(api, w, '0'));
    const newCopy = redeployed.objects.find((o) => o.type === 'dashboard')!.target_id;
    expect(res.objects.find((o) => o.type === 'dashboard' && o.id === newCopy)?.status).toBe('target_only');
  });

  it('Тест -> Прод is compared with from=1', async () => {
    const res = ok<CompareResult>(await compare(api, w, '1'));
    expect(res).toMatchObject({ from_stage: 1, to_stage: 2 });
    expect(new Set(res.objects.map((o) => o.status))).toEqual(new Set(['new']));
  });
});

describe('compare: unbinding erases the copy memory', () => {
  it('originals become new, copies target_only; a re-bind of the same workspace creates second instances', async () => {
    const { w, dev } = await world();
    const k = keys(dev);
    const first = await deployAll(w);
    ok(await api.delete(`/api/pipeline/${w.pipelineId}/stage/1`, w.tokens.admin));
    expect(
      await t.deps.db.select().from(pipelineObjectLinks).where(eq(pipelineObjectLinks.pipelineId, w.pipelineId)),
    ).toEqual([]);
    ok(await api.put(`/api/pipeline/${w.pipelineId}/stage/1`, { workspace_id: w.stages[1] }, w.tokens.admin));
    const s = await statuses(api, w);
    for (const key of Object.values(k)) expect(s[key]).toBe('new');
    for (const o of first.objects) expect(s[`${o.type}:${o.target_id}`]).toBe('target_only');
    const second = await deployAll(w);
    expect(second.objects.map((o) => o.action)).toEqual(['created', 'created', 'created', 'created']);
    for (const [i, o] of second.objects.entries()) expect(o.target_id).not.toBe(first.objects[i].target_id);
    expect(second.warnings.filter((l) => l.includes('уже есть объект с таким именем'))).toHaveLength(4);
  });
});

describe('compare: refusals', () => {
  let w: PipelineWorld;
  beforeAll(async () => {
    ({ w } = await world());
  });

  it.each(['2', '3', '-1', 'abc', ''])('from=%s: 400 «Сравнить можно только с соседней стадией»', async (from) => {
    const res = await compare(api, w, from);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Сравнить можно только с соседней стадией');
  });

  it('without from: 400 as well', async () => {
    const res = await api.get(`/api/pipeline/${w.pipelineId}/compare`, w.tokens.admin);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Сравнить можно только с соседней стадией');
  });

  it('any role in both stages: a Наблюдатель may compare; a role in one stage only: 403; no role at all: 404', async () => {
    expect((await compare(api, w, '0', w.tokens.viewer)).status).toBe(200);
    const half = await createUser(t.deps);
    await addWorkspaceMember(t.deps, w.stages[0], { userId: half.id, role: 'Администратор' });
    const res = await compare(api, w, '0', await login(api, half.username, half.password));
    expect(res.status).toBe(403);
    expect(failure(res).message).toBe('Доступ запрещён');
    const stranger = await createUser(t.deps);
    expect((await compare(api, w, '0', await login(api, stranger.username, stranger.password))).status).toBe(404);
  });

  it('an unbound stage: 400 «Обе стадии должны быть привязаны к пространствам»', async () => {
    ok(await api.delete(`/api/pipeline/${w.pipelineId}/stage/2`, w.tokens.admin));
    const res = await compare(api, w, '1');
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Обе стадии должны быть привязаны к пространствам');
  });
});
