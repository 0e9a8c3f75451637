import { beforeAll, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { pipelineObjectLinks, pipelineSourceRules, pipelineStages } from '../../../db/schema/pipelines';
import { useTestApp } from '../../support/app';
import {
  addToGroup,
  createDashboardRow,
  createGroup,
  createSharedWorkspace,
  createUser,
  login,
} from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import {
  bind,
  createPipelineWorld,
  postPipeline,
  type Available,
  type PipelineView,
  type PipelineWorld,
  type StageView,
} from './world';

const { t, api } = useTestApp();
let w: PipelineWorld;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
});

const TAKEN = 'Пространство уже участвует в другом пайплайне';
const SHARED_ONLY = 'К стадии можно привязать только командное пространство';
const NO_FREE = 'Нет свободного командного пространства, где вы администратор';

/** Copy links of the pipeline as [from_order, original_id] pairs. */
async function linksOf(pipelineId: number): Promise<[number, number][]> {
  const rows = await t.deps.db.select().from(pipelineObjectLinks).where(eq(pipelineObjectLinks.pipelineId, pipelineId));
  return rows.map((r): [number, number] => [r.fromOrder, r.originalId]).sort((a, b) => a[0] - b[0]);
}

async function insertLink(pipelineId: number, fromOrder: number, originalId: number, copyId: number) {
  await t.deps.db.insert(pipelineObjectLinks).values({
    pipelineId,
    fromOrder,
    objectType: 'dashboard',
    originalId,
    copyId,
    originalUpdatedAt: new Date(),
  });
}

describe('PUT /api/pipeline/{id}/stage/{order} (the "Pipeline and stage binding" table)', () => {
  it('no stage bound («Не настроен») -> bind a shared, free workspace administered by the caller -> «Привязано 1 из 3»', async () => {
    const ws = await w.workspace({ author: 'Администратор' });
    const p = await postPipeline(api, w.tokens.author);
    expect(p.binding_label).toBe('Не настроен');
    const res = await api.put(`/api/pipeline/${p.id}/stage/1`, { workspace_id: ws }, w.tokens.author);
    const stage = ok<StageView>(res);
    expect(stage).toMatchObject({ order: 1, name: 'Тест', workspace_id: ws, role: 'Администратор' });
    expect(stage.bound_at).not.toBeNull();
    const after = ok<PipelineView>(await api.get(`/api/pipeline/${p.id}`, w.tokens.author));
    expect(after).toMatchObject({ bound_count: 1, binding_label: 'Привязано 1 из 3' });
    const [row] = await t.deps.db
      .select()
      .from(pipelineStages)
      .where(and(eq(pipelineStages.pipelineId, p.id), eq(pipelineStages.order, 1)));
    expect(row.boundBy).toBe(w.users.author.id);
  });

  it('bound stage -> change workspace (same conditions) -> bound stage; the copy links touching it are forgotten', async () => {
    const { id, ws0 } = await w.boundPipeline();
    await insertLink(id, 0, 101, 201);
    await insertLink(id, 1, 301, 401);
    const next = await w.workspace();
    const stage = await bind(api, w.tokens.adminAll, id, 1, next);
    expect(stage.workspace_id).toBe(next);
    expect(await linksOf(id)).toEqual([]);
    // Binding the workspace a stage already has changes nothing.
    await insertLink(id, 0, 102, 202);
    expect((await bind(api, w.tokens.adminAll, id, 0, ws0)).workspace_id).toBe(ws0);
    expect(await linksOf(id)).toEqual([[0, 102]]);
  });

  it('refuses a personal workspace (400 «К стадии можно привязать только командное пространство»)', async () => {
    const p = await postPipeline(api, w.tokens.author);
    const res = await api.put(
      `/api/pipeline/${p.id}/stage/0`,
      { workspace_id: w.users.author.personalWorkspaceId },
      w.tokens.author,
    );
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(SHARED_ONLY);
  });

  it("answers 404 for someone else's personal workspace, an unknown one, and one the caller is not a member of", async () => {
    const p = await postPipeline(api, w.tokens.author);
    const foreign = await w.workspace({ adminAll: 'Администратор' });
    for (const ws of [w.users.viewer.personalWorkspaceId, 2147483000, foreign]) {
      const res = await api.put(`/api/pipeline/${p.id}/stage/0`, { workspace_id: ws }, w.tokens.author);
      expect(res.status, String(ws)).toBe(404);
      expect(failure(res).message).toBe(`Рабочее пространство не найдено (id ${ws})`);
    }
  });

  it('refuses a workspace where the caller is not Администратор (403 «Доступ запрещён»)', async () => {
    const p = await postPipeline(api, w.tokens.author);
    for (const role of ['Редактор', 'Наблюдатель'] as const) {
      const ws = await w.workspace({ author: role });
      const res = await api.put(`/api/pipeline/${p.id}/stage/0`, { workspace_id: ws }, w.tokens.author);
      expect(res.status).toBe(403);
      expect(failure(res).message).toBe('Доступ запрещён');
    }
  });

  it('accepts Администратор through a group (the strongest of direct and group roles)', async () => {
    const group = await createGroup(t.deps);
    const user = await createUser(t.deps);
    await addToGroup(t.deps, user.id, group.id);
    const token = await login(api, user.username, user.password);
    const ws = await createSharedWorkspace(t.deps, [
      { userId: user.id, role: 'Наблюдатель' },
      { groupId: group.id, role: 'Администратор' },
    ]);
    const p = await postPipeline(api, token);
    expect((await bind(api, token, p.id, 2, ws)).role).toBe('Администратор');
  });

  it('refuses a workspace bound in another pipeline (400 «Пространство уже участвует в другом пайплайне») and in another stage of the same one', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const other = await postPipeline(api, w.tokens.adminAll);
    const res = await api.put(`/api/pipeline/${other.id}/stage/0`, { workspace_id: ws0 }, w.tokens.adminAll);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(TAKEN);
    const same = await api.put(`/api/pipeline/${id}/stage/2`, { workspace_id: ws0 }, w.tokens.adminAll);
    expect(same.status).toBe(400);
    expect(failure(same).message).toBe('Пространство уже привязано к другой стадии этого пайплайна');
  });

  it('binds one workspace into at most one pipeline when two binds race: one 200, the other 400 with the message, never a 500', async () => {
    for (let round = 0; round < 5; round++) {
      const ws = await w.workspace();
      const [a, b] = await Promise.all([postPipeline(api, w.tokens.adminAll), postPipeline(api, w.tokens.adminAll)]);
      const answers = await Promise.all(
        [a, b].map((p) => api.put(`/api/pipeline/${p.id}/stage/0`, { workspace_id: ws }, w.tokens.adminAll)),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(failure(answers.find((r) => r.status === 400)!).message).toBe(TAKEN);
      const holders = await t.deps.db.select().from(pipelineStages).where(eq(pipelineStages.workspaceId, ws));
      expect(holders).toHaveLength(1);
    }
  });

  it('turns the unique index on the stage workspace into the same 400 when the check could not see the other bind', async () => {
    const ws = await w.workspace();
    const [a, b] = await Promise.all([postPipeline(api, w.tokens.adminAll), postPipeline(api, w.tokens.adminAll)]);
    // Another transaction binds the workspace to `a` without taking the workspace row lock (no foreign-key trigger in
    // replica mode), and commits only after `b`'s bind has passed its checks: only the unique index can stop `b`.
    let pending: Promise<RestResponse> | undefined;
    await t.deps.db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = 'replica'`);
      await tx
        .update(pipelineStages)
        .set({ workspaceId: ws })
        .where(and(eq(pipelineStages.pipelineId, a.id), eq(pipelineStages.order, 0)));
      pending = api.put(`/api/pipeline/${b.id}/stage/0`, { workspace_id: ws }, w.tokens.adminAll);
      await new Promise((r) => setTimeout(r, 500));
    });
    const res = await pending!;
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(TAKEN);
  });

  it('answers 404 with a clear message for an order other than 0, 1, 2; 422 for a non-number or huge order and bad bodies', async () => {
    const ws = await w.workspace({ author: 'Администратор' });
    const p = await postPipeline(api, w.tokens.author);
    for (const order of ['3', '-1', '100']) {
      const res = await api.put(`/api/pipeline/${p.id}/stage/${order}`, { workspace_id: ws }, w.tokens.author);
      expect(res.status, order).toBe(404);
      expect(failure(res).message).toBe(`Стадия пайплайна не найдена (order ${order}): есть 0, 1, 2`);
    }
    for (const order of ['x', '1.5', '99999999999']) {
      expect(
        (await api.put(`/api/pipeline/${p.id}/stage/${order}`, { workspace_id: ws }, w.tokens.author)).status,
        order,
      ).toBe(422);
    }
    for (const body of [
      {},
      { workspace_id: 'a\u0000' },
      { workspace_id: 0 },
      { workspace_id: 2147483648 },
      { workspace_id: ws, x: 1 },
    ]) {
      const res = await api.put(`/api/pipeline/${p.id}/stage/0`, body, w.tokens.author);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failure(res).message).toBe('Ошибка валидации');
    }
    expect((await api.put(`/api/pipeline/2147483000/stage/0`, { workspace_id: ws }, w.tokens.author)).status).toBe(404);
  });
});

describe('DELETE /api/pipeline/{id}/stage/{order}', () => {
  it('unbinds; erases the links of both stage pairs touching the stage (originals new, copies target_only); objects and rules stay', async () => {
    const { id, ws0, ws1 } = await w.boundPipeline();
    const ws2 = await w.workspace();
    await bind(api, w.tokens.adminAll, id, 2, ws2);
    const original = await createDashboardRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    const copy = await createDashboardRow(t.deps, { workspaceId: ws1, authorId: w.users.adminAll.id });
    await insertLink(id, 0, original.id, copy.id);
    await insertLink(id, 1, copy.id, copy.id + 1000);
    const uuid = crypto.randomUUID();
    await t.deps.db
      .insert(pipelineSourceRules)
      .values({ pipelineId: id, stageOrder: 1, sourceUuid: uuid, type: 'postgresql' });

    // Unbinding stage 2 forgets only the pair 1 -> 2.
    const stage = ok<StageView>(await api.delete(`/api/pipeline/${id}/stage/2`, w.tokens.adminAll));
    expect(stage).toMatchObject({ order: 2, name: 'Прод', workspace_id: null, bound_at: null });
    expect(await linksOf(id)).toEqual([[0, original.id]]);
    await bind(api, w.tokens.adminAll, id, 2, ws2);
    await insertLink(id, 1, copy.id, copy.id + 1000);

    // Unbinding stage 1 forgets both pairs 0 -> 1 and 1 -> 2.
    ok<StageView>(await api.delete(`/api/pipeline/${id}/stage/1`, w.tokens.adminAll));
    expect(await linksOf(id)).toEqual([]);
    const after = ok<PipelineView>(await api.get(`/api/pipeline/${id}`, w.tokens.adminAll));
    expect(after.stages.map((s) => s.workspace_id)).toEqual([ws0, null, ws2]);
    expect(after.binding_label).toBe('Привязано 2 из 3');
    expect((await api.get(`/api/dashboard/${original.id}`, w.tokens.adminAll)).status).toBe(200);
    expect((await api.get(`/api/dashboard/${copy.id}`, w.tokens.adminAll)).status).toBe(200);
    expect(
      await t.deps.db.select().from(pipelineSourceRules).where(eq(pipelineSourceRules.pipelineId, id)),
    ).toHaveLength(1);

    // The same workspace bound again: the earlier copies are not recognised (no link comes back).
    await bind(api, w.tokens.adminAll, id, 1, ws1);
    expect(await linksOf(id)).toEqual([]);
  });

  it('answers 400 for a stage that is not bound, 404 for order 3', async () => {
    const p = await postPipeline(api, w.tokens.author);
    const res = await api.delete(`/api/pipeline/${p.id}/stage/1`, w.tokens.author);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Стадия не привязана к пространству (order 1)');
    expect((await api.delete(`/api/pipeline/${p.id}/stage/3`, w.tokens.author)).status).toBe(404);
    expect((await api.delete(`/api/pipeline/${p.id}/stage/x`, w.tokens.author)).status).toBe(422);
  });
});

describe('GET /api/pipeline/{id}/available-workspaces', () => {
  it('lists shared workspaces where the caller is Администратор and that no stage holds', async () => {
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    const free = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }], {
      name: 'Б свободное',
    });
    const taken = await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Администратор' }]);
    await createSharedWorkspace(t.deps, [{ userId: user.id, role: 'Редактор' }]);
    const p = await postPipeline(api, token);
    await bind(api, token, p.id, 0, taken);
    const res = ok<Available>(await api.get(`/api/pipeline/${p.id}/available-workspaces`, token));
    expect(res).toEqual({ content: [{ id: free, name: 'Б свободное', description: '' }], message: null });
  });

  it('answers an empty list with «Нет свободного командного пространства, где вы администратор»', async () => {
    const user = await createUser(t.deps);
    const token = await login(api, user.username, user.password);
    const p = await postPipeline(api, token);
    const res = await api.get(`/api/pipeline/${p.id}/available-workspaces`, token);
    expect(res.status).toBe(200);
    expect(ok<Available>(res)).toEqual({ content: [], message: NO_FREE });
  });

  it('answers 404 for a pipeline the caller does not see', async () => {
    const { id } = await w.boundPipeline();
    expect((await api.get(`/api/pipeline/${id}/available-workspaces`, w.tokens.outsider)).status).toBe(404);
    expect((await api.get(`/api/pipeline/${id}/available-workspaces`, w.tokens.viewer)).status).toBe(200);
  });
});

describe('workspaces bound to a stage', () => {
  it('GET /api/workspaces/{id} shows the stage; DELETE is refused without the reason while bound, and works once unbound', async () => {
    const { id, ws1 } = await w.boundPipeline();
    const p = ok<PipelineView>(await api.get(`/api/pipeline/${id}`, w.tokens.adminAll));
    const details = await api.get(`/api/workspaces/${ws1}`, w.tokens.viewer);
    expect(details.body.data.pipeline_stage).toEqual({
      pipeline_id: id,
      pipeline_name: p.name,
      order: 1,
      name: 'Тест',
    });

    const refused = await api.delete(`/api/workspaces/${ws1}`, w.tokens.adminAll);
    expect(refused.status).toBe(400);
    expect(failure(refused).message).toBe('Запрос не может быть выполнен');
    expect((await api.get(`/api/workspaces/${ws1}`, w.tokens.adminAll)).status).toBe(200);

    await api.delete(`/api/pipeline/${id}/stage/1`, w.tokens.adminAll);
    expect((await api.get(`/api/workspaces/${ws1}`, w.tokens.adminAll)).body.data.pipeline_stage).toBeNull();
    expect((await api.delete(`/api/workspaces/${ws1}`, w.tokens.adminAll)).status).toBe(200);
  });
});
