import { beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { dataSources } from '../../../db/schema/data-sources';
import { pipelineSourceRules } from '../../../db/schema/pipelines';
import { pgSettings } from '../../adapters/sources/servers';
import { useTestApp } from '../../support/app';
import { failure, ok } from '../../support/rest';
import {
  bind,
  createPipelineWorld,
  createSourceRow,
  type PipelineWorld,
  type SourceRule,
  type SourceRules,
} from './world';

const { t, api } = useTestApp();
let w: PipelineWorld;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
});

const rulePath = (id: number, order: number | string) => `/api/pipeline/${id}/stage/${order}/data-source-rule`;
const SECRET = 'prod-Secret-42';
const settings = { host: 'prod-db.example', port: 6432, username: 'prod', password: SECRET, db: 'sales' };

const putRule = (id: number, order: number, body: unknown, token = w.tokens.adminAll) =>
  api.put(rulePath(id, order), body, token);
const deleteRule = (id: number, order: number | string, sourceUuid: string | undefined, token = w.tokens.adminAll) =>
  api.call('DELETE', rulePath(id, order), { token, query: sourceUuid === undefined ? {} : { sourceUuid } });

async function storedRule(id: number, uuid: string) {
  const [row] = await t.deps.db
    .select()
    .from(pipelineSourceRules)
    .where(and(eq(pipelineSourceRules.pipelineId, id), eq(pipelineSourceRules.sourceUuid, uuid)));
  return row;
}

describe('GET /api/pipeline/{id}/stage/{order}/data-source-rule', () => {
  it("lists the previous stage's sources (not files) with uuid, name, type and their rule; a source read shows the same uuid", async () => {
    const { id, ws0 } = await w.boundPipeline();
    const a = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id, name: 'А продажи' });
    const b = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id, name: 'Б склад' });
    await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id, type: 'file' });
    ok<SourceRule>(await putRule(id, 1, { source_uuid: b.uuid, settings }));

    const rules = ok<SourceRules>(await api.get(rulePath(id, 1), w.tokens.viewer));
    expect(rules.stage_order).toBe(1);
    expect(rules.source_stage_order).toBe(0);
    expect(rules.sources.map((s) => [s.uuid, s.id, s.name, s.type, s.type_name, s.rule === null])).toEqual([
      [a.uuid, a.id, 'А продажи', 'postgresql', 'PostgreSQL', true],
      [b.uuid, b.id, 'Б склад', 'postgresql', 'PostgreSQL', false],
    ]);
    expect(rules.sources[1].rule).toMatchObject({
      source_uuid: b.uuid,
      type: 'postgresql',
      settings: { host: 'prod-db.example', port: 6432, username: 'prod', db: 'sales', password_set: true },
      author_id: w.users.adminAll.id,
    });
    expect(rules.orphan_rules).toEqual([]);
    expect(JSON.stringify(rules)).not.toContain(SECRET);

    const read = await api.get(`/api/data-source/${a.id}`, w.tokens.adminAll);
    expect(read.body.data.uuid).toBe(a.uuid);
  });

  it('stage 2 lists the sources of stage 1; with stage 1 unbound it lists none and shows its rules apart', async () => {
    const { id, ws1 } = await w.boundPipeline();
    const ws2 = await w.workspace();
    await bind(api, w.tokens.adminAll, id, 2, ws2);
    const s = await createSourceRow(t.deps, { workspaceId: ws1, authorId: w.users.adminAll.id });
    ok<SourceRule>(await putRule(id, 2, { source_uuid: s.uuid, settings }));
    expect(ok<SourceRules>(await api.get(rulePath(id, 2), w.tokens.adminAll)).sources.map((x) => x.uuid)).toEqual([
      s.uuid,
    ]);
    await api.delete(`/api/pipeline/${id}/stage/1`, w.tokens.adminAll);
    const after = ok<SourceRules>(await api.get(rulePath(id, 2), w.tokens.adminAll));
    expect(after.sources).toEqual([]);
    expect(after.orphan_rules.map((r) => r.source_uuid)).toEqual([s.uuid]);
  });

  it('lists a rule whose source was deleted apart (orphan_rules); it can be deleted', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    ok<SourceRule>(await putRule(id, 1, { source_uuid: s.uuid, settings }));
    await t.deps.db.delete(dataSources).where(eq(dataSources.id, s.id));
    const rules = ok<SourceRules>(await api.get(rulePath(id, 1), w.tokens.viewer));
    expect(rules.sources).toEqual([]);
    expect(rules.orphan_rules).toHaveLength(1);
    expect(rules.orphan_rules[0]).toMatchObject({ source_uuid: s.uuid, settings: { password_set: true } });
    expect(ok(await deleteRule(id, 1, s.uuid))).toEqual({ source_uuid: s.uuid, deleted: true });
    expect(ok<SourceRules>(await api.get(rulePath(id, 1), w.tokens.viewer)).orphan_rules).toEqual([]);
  });
});

describe('PUT /api/pipeline/{id}/stage/{order}/data-source-rule', () => {
  it('keeps secrets sealed and masked; an omitted password is unchanged, null removes it, another address drops it', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    const created = ok<SourceRule>(await putRule(id, 1, { source_uuid: s.uuid, settings }));
    expect(created.settings).toMatchObject({ password_set: true, use_ssh: false });
    expect(created.settings).not.toHaveProperty('password');
    const row = await storedRule(id, s.uuid);
    expect(JSON.stringify(row.settings)).not.toContain(SECRET);
    expect(row.secrets).toBeTruthy();
    expect(row.secrets).not.toContain(SECRET);
    expect(t.deps.secretBox.open<{ password: string }>(row.secrets!).password).toBe(SECRET);

    const { password: _omit, ...withoutPassword } = settings;
    const kept = ok<SourceRule>(
      await putRule(id, 1, {
        source_uuid: s.uuid,
        settings: { ...withoutPassword, initial_sql: 'set search_path to sales' },
      }),
    );
    expect(kept.settings).toMatchObject({ initial_sql: 'set search_path to sales', password_set: true });
    expect(Date.parse(kept.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect(
      await t.deps.db.select().from(pipelineSourceRules).where(eq(pipelineSourceRules.pipelineId, id)),
    ).toHaveLength(1);

    const moved = ok<SourceRule>(
      await putRule(id, 1, { source_uuid: s.uuid, settings: { ...withoutPassword, host: 'evil.example' } }),
    );
    expect(moved.settings).toMatchObject({ host: 'evil.example', password_set: false });

    ok<SourceRule>(await putRule(id, 1, { source_uuid: s.uuid, settings }));
    const removed = ok<SourceRule>(
      await putRule(id, 1, { source_uuid: s.uuid, settings: { ...settings, password: null } }),
    );
    expect(removed.settings).toMatchObject({ password_set: false });
  });

  it('validates the settings like a source of that type (422 with field paths), and the body', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    const cases: [unknown, string][] = [
      [{ source_uuid: s.uuid, settings: { ...settings, host: '  ' } }, 'settings.host'],
      [{ source_uuid: s.uuid, settings: { ...settings, port: 70000 } }, 'settings.port'],
      [{ source_uuid: s.uuid, settings: { ...settings, http_port: 8123 } }, 'settings.httpPort'],
      [{ source_uuid: s.uuid, settings: { ...settings, host: 'a\u0000b' } }, 'settings.host'],
      [{ source_uuid: s.uuid, settings: { ...settings, use_ssh: true } }, 'settings.sshTunnel'],
      [{ source_uuid: s.uuid, settings: { ...settings, nope: 1 } }, 'settings.nope'],
      [{ source_uuid: 'not-a-uuid', settings }, 'sourceUuid'],
      [{ source_uuid: `${s.uuid}\u0000`, settings }, 'sourceUuid'],
      [{ settings }, 'sourceUuid'],
      [{ source_uuid: s.uuid }, 'settings'],
    ];
    for (const [body, path] of cases) {
      const res = await putRule(id, 1, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(failure(res).message).toBe('Ошибка валидации');
      expect(Object.keys(failure(res).errors ?? {}), JSON.stringify(body)).toContain(path);
    }
    expect(await t.deps.db.select().from(pipelineSourceRules).where(eq(pipelineSourceRules.pipelineId, id))).toEqual(
      [],
    );
  });

  it('refuses a source that is not in the previous stage (404)', async () => {
    const { id, ws1 } = await w.boundPipeline();
    const elsewhere = await createSourceRow(t.deps, { workspaceId: ws1, authorId: w.users.adminAll.id });
    const res = await putRule(id, 1, { source_uuid: elsewhere.uuid, settings });
    expect(res.status).toBe(404);
    expect(failure(res).message).toBe(`Источник не найден в предыдущей стадии (source_uuid ${elsewhere.uuid})`);
    const unknown = crypto.randomUUID();
    expect((await putRule(id, 1, { source_uuid: unknown, settings })).status).toBe(404);
  });

  it('refuses a file source: its file is copied with it (400)', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const file = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id, type: 'file' });
    const res = await putRule(id, 1, { source_uuid: file.uuid, settings });
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(
      'Файловому источнику правило подстановки не нужно: файл копируется вместе с источником',
    );
  });
});

describe('stage 0 and unknown stages', () => {
  it('answers 400 for stage 0 (no previous stage, so no rules) on GET, PUT and DELETE; 404 for order 3 or -1; 422 for x', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    const message = 'У первой стадии нет правил подстановки: перед ней нет стадии';
    for (const res of [
      await api.get(rulePath(id, 0), w.tokens.adminAll),
      await putRule(id, 0, { source_uuid: s.uuid, settings }),
      await deleteRule(id, 0, s.uuid),
    ]) {
      expect(res.status).toBe(400);
      expect(failure(res).message).toBe(message);
    }
    for (const order of ['3', '-1']) {
      const res = await api.get(rulePath(id, order), w.tokens.adminAll);
      expect(res.status).toBe(404);
      expect(failure(res).message).toBe(`Стадия пайплайна не найдена (order ${order}): есть 0, 1, 2`);
    }
    expect((await api.get(rulePath(id, 'x'), w.tokens.adminAll)).status).toBe(422);
    expect((await api.get(rulePath(2147483000, 1), w.tokens.adminAll)).status).toBe(404);
  });
});

describe('DELETE /api/pipeline/{id}/stage/{order}/data-source-rule?sourceUuid=', () => {
  it('deletes the rule; a second delete and an unknown uuid are 404; a missing or bad sourceUuid is 422', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    ok<SourceRule>(await putRule(id, 1, { source_uuid: s.uuid, settings }));
    expect(ok(await deleteRule(id, 1, s.uuid))).toEqual({ source_uuid: s.uuid, deleted: true });
    expect(await storedRule(id, s.uuid)).toBeUndefined();
    const again = await deleteRule(id, 1, s.uuid);
    expect(again.status).toBe(404);
    expect(failure(again).message).toBe(`Правило подстановки не найдено (source_uuid ${s.uuid})`);
    expect((await deleteRule(id, 1, undefined)).status).toBe(422);
    expect((await deleteRule(id, 1, 'x')).status).toBe(422);
    // The source itself stays.
    expect((await api.get(`/api/data-source/${s.id}`, w.tokens.adminAll)).status).toBe(200);
  });
});

describe("a rule's connection check (POST /api/data-source/check with the rule's type and settings)", () => {
  it('answers «Подключение успешно» for settings that reach a server, and the driver text for a wrong user', async () => {
    const { id, ws0 } = await w.boundPipeline();
    const s = await createSourceRow(t.deps, { workspaceId: ws0, authorId: w.users.adminAll.id });
    const reachable = pgSettings() as Record<string, unknown>;
    const rule = ok<SourceRule>(await putRule(id, 1, { source_uuid: s.uuid, settings: reachable }));
    const check = (settings: unknown) =>
      api.post('/api/data-source/check', { type: rule.type, settings }, w.tokens.adminAll);
    expect(ok(await check(reachable))).toEqual({ ok: true, message: 'Подключение успешно' });
    const wrong = ok<{ ok: boolean; message: string }>(await check({ ...reachable, username: 'no_such_rule_user' }));
    expect(wrong).toMatchObject({ ok: false, message: expect.stringContaining('no_such_rule_user') });
  });
});
