import { beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import {
  pipelineDeployments,
  pipelineObjectLinks,
  pipelineSourceRules,
  pipelineStages,
  pipelines,
} from '../../../db/schema/pipelines';
import { workspaces } from '../../../db/schema/workspaces';
import { useTestApp } from '../../support/app';
import { createDashboardRow, createSysadmin, login } from '../../support/factories';
import { failure, ok, type Deleted } from '../../support/rest';
import {
  bind,
  createPipelineWorld,
  postPipeline,
  type PipelinePage,
  type PipelineView,
  type PipelineWorld,
} from './world';

const { t, api } = useTestApp();
let w: PipelineWorld;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
});

describe('POST /api/pipeline', () => {
  it('creates the pipeline with its three fixed stages, unbound, labelled «Не настроен»', async () => {
    const res = await api.post('/api/pipeline', { name: '  Отчётность  ', description: 'Продажи' }, w.tokens.author);
    const p = ok<PipelineView>(res);
    expect(p).toMatchObject({
      name: 'Отчётность',
      description: 'Продажи',
      author_id: w.users.author.id,
      bound_count: 0,
      binding_label: 'Не настроен',
      can_manage: true,
    });
    expect(p.stages).toEqual([
      { order: 0, name: 'Разработка', workspace_id: null, workspace_name: null, bound_at: null, role: null },
      { order: 1, name: 'Тест', workspace_id: null, workspace_name: null, bound_at: null, role: null },
      { order: 2, name: 'Прод', workspace_id: null, workspace_name: null, bound_at: null, role: null },
    ]);
    const stored = await t.deps.db.select().from(pipelineStages).where(eq(pipelineStages.pipelineId, p.id));
    expect(stored.map((s) => s.order).sort()).toEqual([0, 1, 2]);
  });

  it('takes a missing description as empty', async () => {
    expect((await postPipeline(api, w.tokens.outsider)).description).toBe('');
  });

  it('answers 422 with field paths for a blank name, NUL bytes, a wrong type and an unknown field; 401 without a token', async () => {
    const blank = await api.post('/api/pipeline', { name: '  ', extra: 1 }, w.tokens.author);
    expect(blank.status).toBe(422);
    expect(failure(blank)).toMatchObject({
      message: 'Ошибка валидации',
      errors: { name: 'must not be blank', extra: 'unknown field' },
    });
    const nul = await api.post('/api/pipeline', { name: 'a\u0000b', description: 'x\u0000' }, w.tokens.author);
    expect(nul.status).toBe(422);
    expect(Object.keys(failure(nul).errors ?? {}).sort()).toEqual(['description', 'name']);
    expect((await api.post('/api/pipeline', { name: 5 }, w.tokens.author)).status).toBe(422);
    expect((await api.post('/api/pipeline', { name: 'x'.repeat(201) }, w.tokens.author)).status).toBe(422);
    expect((await api.post('/api/pipeline', { name: 'x' })).status).toBe(401);
  });
});

describe('GET /api/pipeline/{id}', () => {
  it('shows the bound workspaces, the caller role per stage and «Привязано N из 3»', async () => {
    const { id, ws0, ws1 } = await w.boundPipeline();
    const p = ok<PipelineView>(await api.get(`/api/pipeline/${id}`, w.tokens.viewer));
    expect(p.bound_count).toBe(2);
    expect(p.binding_label).toBe('Привязано 2 из 3');
    expect(p.stages.map((s) => [s.order, s.name, s.workspace_id, s.role])).toEqual([
      [0, 'Разработка', ws0, 'Наблюдатель'],
      [1, 'Тест', ws1, 'Наблюдатель'],
      [2, 'Прод', null, null],
    ]);
    const [ws0Row] = await t.deps.db.select().from(workspaces).where(eq(workspaces.id, ws0));
    expect(p.stages[0].workspace_name).toBe(ws0Row.name);
    expect(p.can_manage).toBe(false);
    expect(ok<PipelineView>(await api.get(`/api/pipeline/${id}`, w.tokens.adminAll)).can_manage).toBe(true);
    const ws2 = await w.workspace();
    await bind(api, w.tokens.adminAll, id, 2, ws2);
    expect(ok<PipelineView>(await api.get(`/api/pipeline/${id}`, w.tokens.adminAll)).binding_label).toBe(
      'Привязано 3 из 3',
    );
  });

  it('answers 404 «Пайплайн не найден (id N)» for a missing id and for one the caller may not see', async () => {
    const missing = await api.get('/api/pipeline/2147483000', w.tokens.author);
    expect(missing.status).toBe(404);
    expect(failure(missing).message).toBe('Пайплайн не найден (id 2147483000)');
    const { id } = await w.boundPipeline();
    const hidden = await api.get(`/api/pipeline/${id}`, w.tokens.outsider);
    expect(hidden.status).toBe(404);
    expect(failure(hidden).message).toBe(`Пайплайн не найден (id ${id})`);
    // A system administrator has no implicit role in the stages' workspaces (docs/roles.md).
    const sysadmin = await createSysadmin(t.deps);
    const token = await login(api, sysadmin.username, sysadmin.password);
    expect((await api.get(`/api/pipeline/${id}`, token)).status).toBe(404);
    expect((await api.put(`/api/pipeline/${id}`, { name: 'x' }, token)).status).toBe(404);
  });

  it('answers 422 for ids out of range or not numbers', async () => {
    for (const bad of ['0', '-1', '2147483648', '99999999999999999999', 'x', '1.5']) {
      expect((await api.get(`/api/pipeline/${bad}`, w.tokens.author)).status, bad).toBe(422);
    }
  });
});

describe('GET /api/pipeline', () => {
  it('lists what the caller sees (author, or any role in a bound stage), paged, searchable by name', async () => {
    const marker = `m${Date.now()}`;
    const own = await postPipeline(api, w.tokens.author, { name: `${marker} свой` });
    const { id: bound } = await w.boundPipeline();
    await api.put(`/api/pipeline/${bound}`, { name: `${marker} общий` }, w.tokens.adminAll);
    const idsOf = async (token: string) =>
      ok<PipelinePage>(await api.get('/api/pipeline', token, { query: marker, size: '100' })).content.map((p) => p.id);
    expect(await idsOf(w.tokens.author)).toEqual([own.id]);
    expect(await idsOf(w.tokens.viewer)).toEqual([bound]);
    expect(await idsOf(w.tokens.adminSome)).toEqual([bound]);
    expect(await idsOf(w.tokens.outsider)).toEqual([]);

    const page = ok<PipelinePage>(
      await api.get('/api/pipeline', w.tokens.adminAll, { query: marker, size: '1', page: '0', sort: 'name,desc' }),
    );
    expect(page.page).toEqual({ size: 1, number: 0, total_elements: 1, total_pages: 1 });
    expect(page.content[0]).toMatchObject({ id: bound, binding_label: 'Привязано 2 из 3' });
    expect(page.content[0].stages).toHaveLength(3);
  });

  it('answers 422 for a bad sort field, page, size, or NUL in the search', async () => {
    expect((await api.get('/api/pipeline', w.tokens.author, { sort: 'secret,asc' })).status).toBe(422);
    expect((await api.get('/api/pipeline', w.tokens.author, { page: '-1' })).status).toBe(422);
    expect((await api.get('/api/pipeline', w.tokens.author, { size: '0' })).status).toBe(422);
    const nul = await api.get('/api/pipeline', w.tokens.author, { query: 'a\u0000b' });
    expect(nul.status).toBe(422);
    expect(Object.keys(failure(nul).errors ?? {})).toEqual(['query']);
  });
});

describe('PUT /api/pipeline/{id}', () => {
  it('renames and describes; a left-out description is kept; updated_at moves', async () => {
    const p = await postPipeline(api, w.tokens.author, { description: 'было' });
    const renamed = ok<PipelineView>(await api.put(`/api/pipeline/${p.id}`, { name: 'Новое' }, w.tokens.author));
    expect(renamed).toMatchObject({ name: 'Новое', description: 'было' });
    expect(Date.parse(renamed.updated_at)).toBeGreaterThanOrEqual(Date.parse(p.updated_at));
    const cleared = ok<PipelineView>(
      await api.put(`/api/pipeline/${p.id}`, { name: 'Новое', description: '' }, w.tokens.author),
    );
    expect(cleared.description).toBe('');
    expect((await api.put(`/api/pipeline/${p.id}`, { name: '' }, w.tokens.author)).status).toBe(422);
    expect((await api.put(`/api/pipeline/${p.id}`, { name: 'a\u0000' }, w.tokens.author)).status).toBe(422);
    expect((await api.put('/api/pipeline/2147483648', { name: 'x' }, w.tokens.author)).status).toBe(422);
    expect((await api.put('/api/pipeline/2147483000', { name: 'x' }, w.tokens.author)).status).toBe(404);
    expect((await api.delete('/api/pipeline/2147483648', w.tokens.author)).status).toBe(422);
  });
});

describe('DELETE /api/pipeline/{id}', () => {
  it('deletes the pipeline, its stages, links, rules and history; the workspaces and their objects stay', async () => {
    const { id, ws0, ws1 } = await w.boundPipeline();
    const dash = await createDashboardRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    await t.deps.db.insert(pipelineObjectLinks).values({
      pipelineId: id,
      fromOrder: 0,
      objectType: 'dashboard',
      originalId: dash.id,
      copyId: dash.id + 1,
      originalUpdatedAt: new Date(),
    });
    await t.deps.db
      .insert(pipelineSourceRules)
      .values({ pipelineId: id, stageOrder: 1, sourceUuid: crypto.randomUUID(), type: 'postgresql' });
    await t.deps.db.insert(pipelineDeployments).values({ pipelineId: id, fromStage: 0, userId: w.users.adminAll.id });

    const res = await api.delete(`/api/pipeline/${id}`, w.tokens.adminAll);
    expect(ok<Deleted>(res)).toEqual({ id, deleted: true });
    const gone = await api.get(`/api/pipeline/${id}`, w.tokens.adminAll);
    expect(gone.status).toBe(404);
    for (const [table, column] of [
      [pipelines, pipelines.id],
      [pipelineStages, pipelineStages.pipelineId],
      [pipelineObjectLinks, pipelineObjectLinks.pipelineId],
      [pipelineSourceRules, pipelineSourceRules.pipelineId],
      [pipelineDeployments, pipelineDeployments.pipelineId],
    ] as const) {
      expect(await t.deps.db.select().from(table).where(eq(column, id))).toEqual([]);
    }
    expect((await api.get(`/api/workspaces/${ws0}`, w.tokens.adminAll)).status).toBe(200);
    expect((await api.get(`/api/dashboard/${dash.id}`, w.tokens.adminAll)).status).toBe(200);
    // The workspaces are free again: they can be deleted, or bound to another pipeline.
    expect((await api.delete(`/api/workspaces/${ws1}`, w.tokens.adminAll)).status).toBe(200);
    const other = await postPipeline(api, w.tokens.adminAll);
    expect((await bind(api, w.tokens.adminAll, other.id, 0, ws0)).workspace_id).toBe(ws0);
  });

  it('deletes an unbound pipeline for its author; a second delete is a 404', async () => {
    const p = await postPipeline(api, w.tokens.author);
    expect(ok<Deleted>(await api.delete(`/api/pipeline/${p.id}`, w.tokens.author))).toEqual({
      id: p.id,
      deleted: true,
    });
    expect((await api.delete(`/api/pipeline/${p.id}`, w.tokens.author)).status).toBe(404);
  });
});
