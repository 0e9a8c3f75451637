import { beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { pipelineSourceRules } from '../../../db/schema/pipelines';
import { workspaceMembers } from '../../../db/schema/workspaces';
import { useTestApp } from '../../support/app';
import { failure, type RestResponse } from '../../support/rest';
import { bind, createPipelineWorld, createSourceRow, postPipeline, type Persona, type PipelineWorld } from './world';

/*
 * The permissions table of Authentication point 6, action by caller:
 *   see: any role in any bound stage, or the author;
 *   rename, delete, bind, unbind: Администратор in all bound stages (the author freely while none is bound);
 *   substitution rules: Администратор in the stage where the rule is made (reading them: any role there).
 * Not visible: 404; visible with a role lacking: 403 «Доступ запрещён».
 */

const { t, api } = useTestApp();
let w: PipelineWorld;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
});

const settings = { host: 'test-db.example', port: 5432, username: 'test', password: 'test-secret', db: 'sales' };

/** One call of the action on pipeline `id` (stages 0 and 1 bound) as `who`; the targets are made fresh for it. */
type Action = (id: number, who: Persona, ws0: number) => Promise<RestResponse>;

const ACTIONS: Record<string, Action> = {
  see: (id, who) => api.get(`/api/pipeline/${id}`, w.tokens[who]),
  rename: (id, who) => api.put(`/api/pipeline/${id}`, { name: 'Новое имя' }, w.tokens[who]),
  delete: (id, who) => api.delete(`/api/pipeline/${id}`, w.tokens[who]),
  bind: async (id, who) => {
    const ws = await w.workspace({ [who]: 'Администратор' });
    return api.put(`/api/pipeline/${id}/stage/2`, { workspace_id: ws }, w.tokens[who]);
  },
  unbind: (id, who) => api.delete(`/api/pipeline/${id}/stage/1`, w.tokens[who]),
  readRules: (id, who) => api.get(`/api/pipeline/${id}/stage/1/data-source-rule`, w.tokens[who]),
  editRule: async (id, who, ws0) => {
    const source = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    return api.put(
      `/api/pipeline/${id}/stage/1/data-source-rule`,
      { source_uuid: source.uuid, settings },
      w.tokens[who],
    );
  },
  deleteRule: async (id, who, ws0) => {
    const source = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    await t.deps.db
      .insert(pipelineSourceRules)
      .values({ pipelineId: id, stageOrder: 1, sourceUuid: source.uuid, type: 'postgresql' });
    return api.call('DELETE', `/api/pipeline/${id}/stage/1/data-source-rule`, {
      token: w.tokens[who],
      query: { sourceUuid: source.uuid },
    });
  },
};

// Stage 0: adminAll Администратор, adminSome Редактор, viewer Наблюдатель; stage 1: adminAll and adminSome
// Администратор, viewer Наблюдатель; stage 2 unbound. adminAll is the author.
const BOUND: Record<string, Record<Exclude<Persona, 'author'>, number>> = {
  see: { adminAll: 200, adminSome: 200, viewer: 200, outsider: 404 },
  rename: { adminAll: 200, adminSome: 403, viewer: 403, outsider: 404 },
  delete: { adminAll: 200, adminSome: 403, viewer: 403, outsider: 404 },
  bind: { adminAll: 200, adminSome: 403, viewer: 403, outsider: 404 },
  unbind: { adminAll: 200, adminSome: 403, viewer: 403, outsider: 404 },
  readRules: { adminAll: 200, adminSome: 200, viewer: 200, outsider: 404 },
  editRule: { adminAll: 200, adminSome: 200, viewer: 403, outsider: 404 },
  deleteRule: { adminAll: 200, adminSome: 200, viewer: 403, outsider: 404 },
};

describe('permissions of a bound pipeline: admin in all, admin in some, viewer, outsider', () => {
  for (const [action, expected] of Object.entries(BOUND)) {
    it(`${action}: ${JSON.stringify(expected)}`, async () => {
      const got: Record<string, number> = {};
      for (const who of Object.keys(expected) as Exclude<Persona, 'author'>[]) {
        const { id, ws0 } = await w.boundPipeline();
        const res = await ACTIONS[action](id, who, ws0);
        got[who] = res.status;
        if (res.status === 403) expect(failure(res).message).toBe('Доступ запрещён');
        if (res.status === 404) expect(failure(res).message).toBe(`Пайплайн не найден (id ${id})`);
      }
      expect(got).toEqual(expected);
    });
  }
});

describe('permissions while no stage is bound: the author configures freely, nobody else sees the pipeline', () => {
  const actions = ['see', 'rename', 'bind', 'delete'] as const;
  for (const action of actions) {
    it(`${action}: author 200, everyone else 404`, async () => {
      for (const who of ['author', 'adminAll', 'adminSome', 'viewer', 'outsider'] as const) {
        const p = await postPipeline(api, w.tokens.author);
        const res =
          action === 'bind'
            ? await api.put(
                `/api/pipeline/${p.id}/stage/0`,
                { workspace_id: await w.workspace({ [who]: 'Администратор' }) },
                w.tokens[who],
              )
            : await ACTIONS[action](p.id, who, 0);
        expect(res.status, who).toBe(who === 'author' ? 200 : 404);
      }
    });
  }

  it('rules of an unbound stage: 400 with the reason for the author', async () => {
    const p = await postPipeline(api, w.tokens.author);
    const res = await api.get(`/api/pipeline/${p.id}/stage/1/data-source-rule`, w.tokens.author);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Стадия не привязана к пространству (order 1)');
  });
});

describe('after the first binding the author needs Администратор in every bound stage', () => {
  it('the author loses rename, bind, unbind and delete once a stage where they hold no role is bound', async () => {
    const ws0 = await w.workspace({ author: 'Администратор', adminAll: 'Администратор' });
    const ws1 = await w.workspace({ adminAll: 'Администратор' });
    const p = await postPipeline(api, w.tokens.author);
    await bind(api, w.tokens.author, p.id, 0, ws0);
    // Still Администратор in every bound stage: allowed.
    expect((await api.put(`/api/pipeline/${p.id}`, { name: 'A' }, w.tokens.author)).status).toBe(200);
    await bind(api, w.tokens.adminAll, p.id, 1, ws1);
    expect((await api.get(`/api/pipeline/${p.id}`, w.tokens.author)).status).toBe(200);
    expect((await api.put(`/api/pipeline/${p.id}`, { name: 'B' }, w.tokens.author)).status).toBe(403);
    expect((await api.delete(`/api/pipeline/${p.id}/stage/1`, w.tokens.author)).status).toBe(403);
    expect((await api.delete(`/api/pipeline/${p.id}`, w.tokens.author)).status).toBe(403);
    const ws2 = await w.workspace({ author: 'Администратор' });
    const bindRes = await api.put(`/api/pipeline/${p.id}/stage/2`, { workspace_id: ws2 }, w.tokens.author);
    expect(bindRes.status).toBe(403);
  });

  it('the author keeps seeing the pipeline after the first binding (see: any role in a bound stage, or the author)', async () => {
    const ws0 = await w.workspace({ adminAll: 'Администратор', author: 'Администратор' });
    const p = await postPipeline(api, w.tokens.author);
    await bind(api, w.tokens.author, p.id, 0, ws0);
    // The author leaves the workspace: no role in any bound stage, still the author.
    await t.deps.db
      .delete(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, ws0), eq(workspaceMembers.userId, w.users.author.id)));
    expect((await api.get(`/api/pipeline/${p.id}`, w.tokens.author)).status).toBe(200);
    expect((await api.put(`/api/pipeline/${p.id}`, { name: 'C' }, w.tokens.author)).status).toBe(403);
  });
});
