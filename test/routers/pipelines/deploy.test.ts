import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { dashboards } from '../../../db/schema/dashboards';
import { dataSources } from '../../../db/schema/data-sources';
import { datasets } from '../../../db/schema/datasets';
import { objectRights } from '../../../db/schema/object-rights';
import { pipelineDeployments, pipelineObjectLinks } from '../../../db/schema/pipelines';
import { widgets } from '../../../db/schema/widgets';
import type { dashboardSchemaView } from '../../../routers/dashboards/schemas';
import type { dataSourceView } from '../../../routers/data-sources/schemas';
import type { datasetDetails } from '../../../routers/datasets/schemas';
import type { extractionOutput } from '../../../routers/etl/schemas';
import type { widgetView } from '../../../routers/widgets/schemas';
import { openSecrets } from '../../../server/data-sources/connection';
import { useTestApp } from '../../support/app';
import { addWorkspaceMember, createUser, login, uniq } from '../../support/factories';
import { failure, ok, type RestResponse } from '../../support/rest';
import {
  createPipelineWorld,
  createStageObjects,
  deploy,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
  schemaSaveOf,
} from './deploy-world';

type Dataset = z.output<typeof datasetDetails>;
type DashboardSchema = z.output<typeof dashboardSchemaView>;
type Source = z.output<typeof dataSourceView>;
type Widget = z.output<typeof widgetView>;
type Extraction = z.output<typeof extractionOutput>;

const { t, api } = useTestApp();
const RULE_SECRET = 'rule-Secret-7';
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

const copyOf = (r: DeployResult, type: string, sourceId: number) => {
  const o = r.objects.find((x) => x.type === type && x.source_id === sourceId);
  if (!o) throw new Error(`no ${type} ${sourceId} in ${JSON.stringify(r.objects)}`);
  return o.target_id;
};
const deployAll = async (api_: typeof api, w: PipelineWorld, from = 0) =>
  ok<DeployResult>(await deploy(api_, w, { from_stage: from, objects: [] }));
const widgetData = async (id: number, token: string) => ok(await api.post(`/api/widget/${id}/data`, {}, token));

describe('deploy: what goes and how it is copied (rules 2, 3, 4)', () => {
  let w: PipelineWorld;
  let dev: StageObjects;
  let first: DeployResult;
  beforeAll(async () => {
    ({ w, dev } = await world());
    // RLS and CLS rules go with the copy, on the copied fields.
    ok(
      await api.post(
        `/api/dataset/${dev.datasetId}/rls-rules`,
        { field_id: dev.fields.id, attribute: 'region', operator: 'in', user_ids: [w.viewer.id] },
        w.tokens.admin,
      ),
    );
    ok(
      await api.post(
        `/api/dataset/${dev.datasetId}/cls-rules`,
        { field_ids: [dev.fields.amount], action: 'mask', user_ids: [w.viewer.id] },
        w.tokens.admin,
      ),
    );
    first = await deployAll(api, w);
  });

  it('objects: [] deploys every object of the source stage, in the order sources, datasets, widgets, dashboards', () => {
    expect(first.objects.map((o) => [o.type, o.source_id, o.action])).toEqual([
      ['data_source', dev.sourceId, 'created'],
      ['dataset', dev.datasetId, 'created'],
      ['widget', dev.widgetId, 'created'],
      ['dashboard', dev.dashboardId, 'created'],
    ]);
    expect(first).toMatchObject({ pipeline_id: w.pipelineId, from_stage: 0, to_stage: 1 });
  });

  it('the copies live in the receiving stage and point at each other', async () => {
    const dataset = ok<Dataset>(
      await api.get(`/api/dataset/${copyOf(first, 'dataset', dev.datasetId)}`, w.tokens.admin),
    );
    const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, w.tokens.admin));
    expect(dataset.workspace_id).toBe(w.stages[1]);
    const sourceCopy = copyOf(first, 'data_source', dev.sourceId);
    expect(dataset.objects.map((o) => o.data_source_id)).toEqual([sourceCopy, sourceCopy]);
    const copied = new Map(dataset.fields.map((f) => [f.name, f.id]));
    const byOriginal = new Map(original.fields.map((f) => [f.id, copied.get(f.name)!]));
    const objects = new Map(original.objects.map((o, i) => [o.id, dataset.objects[i].id]));
    expect(new Set(dataset.fields.map((f) => f.id)).size).toBe(5);
    for (const f of dataset.fields) expect(original.fields.map((o) => o.id)).not.toContain(f.id);
    expect(dataset.relations).toEqual(
      original.relations.map((r) => ({
        ...r,
        id: dataset.relations[0].id,
        left_object_id: objects.get(r.left_object_id),
        right_object_id: objects.get(r.right_object_id),
        conditions: r.conditions.map((c) => ({
          left_field_id: byOriginal.get(c.left_field_id),
          right_field_id: byOriginal.get(c.right_field_id),
        })),
      })),
    );
    // The hierarchy with a level on a calculated field deploys (the reference's 500 is not reproduced).
    expect(dataset.hierarchies.map((h) => h.field_ids)).toEqual([[copied.get('city'), copied.get('double')]]);
    expect(dataset.filters.map((f) => f.field_id)).toEqual([copied.get('id')]);
    expect(dataset.parameters.map((p) => [p.name, p.default_value])).toEqual([['rate', '2']]);
    type Rules<R> = { rules: R[] };
    const rls = ok<Rules<{ field_id: number; user_ids: number[] }>>(
      await api.get(`/api/dataset/${dataset.id}/rls-rules`, w.tokens.admin),
    ).rules;
    expect(rls.map((r) => [r.field_id, r.user_ids])).toEqual([[copied.get('id'), [w.viewer.id]]]);
    const cls = ok<Rules<{ field_ids: number[] }>>(
      await api.get(`/api/dataset/${dataset.id}/cls-rules`, w.tokens.admin),
    ).rules;
    expect(cls.map((r) => r.field_ids)).toEqual([[copied.get('amount')]]);

    const widget = ok<Widget>(await api.get(`/api/widget/${copyOf(first, 'widget', dev.widgetId)}`, w.tokens.admin));
    expect(widget.dataset_id).toBe(dataset.id);
    const layout = ok<DashboardSchema>(
      await api.get(`/api/dashboard/${copyOf(first, 'dashboard', dev.dashboardId)}/schema`, w.tokens.admin),
    );
    expect(layout.items.map((i) => i.widget_id)).toEqual([widget.id]);
    expect(layout.selectors.map((s) => [s.field_id, s.widget_ids])).toEqual([[copied.get('city'), [widget.id]]]);
  });

  it('a copied widget answers the same data as its original, and the copied dashboard too', async () => {
    const original = await widgetData(dev.widgetId, w.tokens.admin);
    expect(JSON.stringify(original)).toContain('Казань');
    expect(await widgetData(copyOf(first, 'widget', dev.widgetId), w.tokens.admin)).toEqual(original);
    type DashboardData = { widgets: { widget_id: number; data: unknown }[] };
    const a = ok<DashboardData>(await api.post(`/api/dashboard/${dev.dashboardId}/data`, {}, w.tokens.admin));
    const b = ok<DashboardData>(
      await api.post(`/api/dashboard/${copyOf(first, 'dashboard', dev.dashboardId)}/data`, {}, w.tokens.admin),
    );
    expect(b.widgets.map((x) => x.widget_id)).toEqual([copyOf(first, 'widget', dev.widgetId)]);
    expect(b.widgets.map((x) => x.data)).toEqual(a.widgets.map((x) => x.data));
  });

  it('a repeated deploy updates the copies in place (same ids), schema changes included', async () => {
    const before = ok<Dataset>(
      await api.get(`/api/dataset/${copyOf(first, 'dataset', dev.datasetId)}`, w.tokens.admin),
    );
    const widget = ok<Widget>(await api.get(`/api/widget/${dev.widgetId}`, w.tokens.admin));
    const renamed = uniq('renamed');
    ok(
      await api.put(
        `/api/widget/${dev.widgetId}`,
        { name: renamed, type: widget.type, dataset_id: dev.datasetId, rows: widget.rows, columns: widget.columns },
        w.tokens.admin,
      ),
    );
    const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, w.tokens.admin));
    ok(
      await api.put(
        `/api/dataset/${dev.datasetId}/schema`,
        schemaSaveOf(original, { add: [{ id: -1, name: 'triple', formula: '[cities.amount] * 3' }] }),
        w.tokens.admin,
      ),
    );
    const again = await deployAll(api, w);
    expect(again.objects.map((o) => [o.type, o.action])).toEqual([
      ['data_source', 'updated'],
      ['dataset', 'updated'],
      ['widget', 'updated'],
      ['dashboard', 'updated'],
    ]);
    expect(again.objects.map((o) => o.target_id)).toEqual(first.objects.map((o) => o.target_id));
    const after = ok<Dataset>(await api.get(`/api/dataset/${copyOf(first, 'dataset', dev.datasetId)}`, w.tokens.admin));
    // Fields matching by name keep their ids; the new one is there; the dropped filter is gone.
    for (const f of before.fields) expect(after.fields.find((x) => x.name === f.name)?.id).toBe(f.id);
    expect(after.fields.map((f) => f.name)).toContain('triple');
    expect(after.filters).toEqual([]);
    const copy = ok<Widget>(await api.get(`/api/widget/${copyOf(first, 'widget', dev.widgetId)}`, w.tokens.admin));
    expect(copy.name).toBe(renamed);
    const inTarget = await t.deps.db.select().from(widgets).where(eq(widgets.workspaceId, w.stages[1]));
    expect(inTarget).toHaveLength(1);
  });

  it('permissions of objects are not carried', async () => {
    const other = await createUser(t.deps);
    await t.deps.db
      .insert(objectRights)
      .values({ objectType: 'widget', objectId: dev.widgetId, userId: other.id, right: 'view' });
    const again = await deployAll(api, w);
    const rights = await t.deps.db
      .select()
      .from(objectRights)
      .where(
        and(eq(objectRights.objectType, 'widget'), eq(objectRights.objectId, copyOf(again, 'widget', dev.widgetId))),
      );
    expect(rights).toEqual([]);
  });
});

describe('deploy: dependencies, names and connections (rules 3, 5, 6, 7)', () => {
  it('a widget brings its dataset and sources, not the dashboards that show it', async () => {
    const { w, dev } = await world();
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'widget', id: dev.widgetId }] }),
    );
    expect(r.objects.map((o) => [o.type, o.source_id])).toEqual([
      ['data_source', dev.sourceId],
      ['dataset', dev.datasetId],
      ['widget', dev.widgetId],
    ]);
  });

  it('a dashboard alone, first deploy: brings its widgets, their datasets and sources, all created and wired', async () => {
    const { w, dev } = await world();
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dashboard', id: dev.dashboardId }] }),
    );
    expect(r.objects.map((o) => [o.type, o.source_id, o.action])).toEqual([
      ['data_source', dev.sourceId, 'created'],
      ['dataset', dev.datasetId, 'created'],
      ['widget', dev.widgetId, 'created'],
      ['dashboard', dev.dashboardId, 'created'],
    ]);
    const widget = ok<Widget>(await api.get(`/api/widget/${copyOf(r, 'widget', dev.widgetId)}`, w.tokens.admin));
    expect(widget.dataset_id).toBe(copyOf(r, 'dataset', dev.datasetId));
    const dataset = ok<Dataset>(await api.get(`/api/dataset/${widget.dataset_id}`, w.tokens.admin));
    expect(dataset.objects.map((o) => o.data_source_id)).toEqual(Array(2).fill(copyOf(r, 'data_source', dev.sourceId)));
    const layout = ok<DashboardSchema>(
      await api.get(`/api/dashboard/${copyOf(r, 'dashboard', dev.dashboardId)}/schema`, w.tokens.admin),
    );
    expect(layout.items.map((i) => i.widget_id)).toEqual([widget.id]);
  });

  it('rights: Наблюдатель in the source stage who is Администратор in the receiving one may deploy', async () => {
    const { w, dev } = await world();
    const user = await createUser(t.deps);
    await addWorkspaceMember(t.deps, w.stages[0], { userId: user.id, role: 'Наблюдатель' });
    await addWorkspaceMember(t.deps, w.stages[1], { userId: user.id, role: 'Администратор' });
    const token = await login(api, user.username, user.password);
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'widget', id: dev.widgetId }] }, token),
    );
    expect(r.objects.map((o) => [o.type, o.source_id, o.action])).toEqual([
      ['data_source', dev.sourceId, 'created'],
      ['dataset', dev.datasetId, 'created'],
      ['widget', dev.widgetId, 'created'],
    ]);
    const copy = ok<Widget>(await api.get(`/api/widget/${copyOf(r, 'widget', dev.widgetId)}`, w.tokens.admin));
    expect(copy.workspace_id).toBe(w.stages[1]);
  });

  it('a same-named unrelated object in the target: a warning line, and a second object', async () => {
    const { w, dev } = await world();
    const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, w.tokens.admin));
    const twin = ok<{ id: number }>(
      await api.post('/api/dataset', { name: original.name, workspace_id: w.stages[1] }, w.tokens.admin),
    );
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: dev.datasetId }] }),
    );
    expect(copyOf(r, 'dataset', dev.datasetId)).not.toBe(twin.id);
    expect(r.warnings).toContain(
      `Датасет «${original.name}»: в целевом пространстве уже есть объект с таким именем, создан второй`,
    );
    // The repeated deploy updates the copy: no second warning, no third object.
    const again = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: dev.datasetId }] }),
    );
    expect(again.warnings.filter((l) => l.startsWith('Датасет'))).toEqual([]);
  });

  it('rule 7 over REST: no rule keeps the source connection (warning); a PUT rule gives the copy its settings and sealed password; DELETE returns the source connection; the copy keeps its uuid', async () => {
    const { w, dev } = await world();
    const [original] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, dev.sourceId));
    const originalSettings = original.settings as { host: string; port: number; db: string };
    const sourceOnly = { from_stage: 0, objects: [{ type: 'data_source', id: dev.sourceId }] };
    const first = ok<DeployResult>(await deploy(api, w, sourceOnly));
    expect(first.warnings).toEqual([
      `Источник данных «${original.name}»: нет правила подстановки, копия использует подключение исходной стадии`,
    ]);
    const copyId = copyOf(first, 'data_source', dev.sourceId);
    const readCopy = async () => {
      const res = await api.get(`/api/data-source/${copyId}`, w.tokens.admin);
      expect(JSON.stringify(res.body)).not.toContain(RULE_SECRET);
      return ok<Source>(res);
    };
    const storedCopy = async () => (await t.deps.db.select().from(dataSources).where(eq(dataSources.id, copyId)))[0];
    const firstRead = await readCopy();
    expect(firstRead.settings).toMatchObject({ host: originalSettings.host, db: originalSettings.db });
    expect(firstRead.uuid).not.toBe(original.uuid);

    const rulePath = `/api/pipeline/${w.pipelineId}/stage/1/data-source-rule`;
    const ruleSettings = {
      host: 'test-stage-db.example',
      port: 6543,
      username: 'stage',
      password: RULE_SECRET,
      db: 'sales_test',
    };
    const put = await api.put(rulePath, { source_uuid: original.uuid, settings: ruleSettings }, w.tokens.admin);
    expect(JSON.stringify(ok(put))).not.toContain(RULE_SECRET);
    const second = ok<DeployResult>(await deploy(api, w, sourceOnly));
    expect(second.warnings).toEqual([]);
    expect(second.objects.map((o) => [o.target_id, o.action])).toEqual([[copyId, 'updated']]);
    const ruled = await readCopy();
    expect(ruled.settings).toMatchObject({
      host: 'test-stage-db.example',
      port: 6543,
      username: 'stage',
      db: 'sales_test',
      password_set: true,
    });
    expect(ruled.uuid).toBe(firstRead.uuid);
    expect(openSecrets(t.deps, await storedCopy()).password).toBe(RULE_SECRET);

    const removed = await api.call('DELETE', rulePath, { token: w.tokens.admin, query: { sourceUuid: original.uuid } });
    expect(removed.status).toBe(200);
    const third = ok<DeployResult>(await deploy(api, w, sourceOnly));
    expect(third.warnings).toEqual(first.warnings);
    const back = await readCopy();
    expect(back.settings).toMatchObject({
      host: originalSettings.host,
      port: originalSettings.port,
      db: originalSettings.db,
    });
    expect(back.uuid).toBe(firstRead.uuid);
    expect(openSecrets(t.deps, await storedCopy()).password).toBe(openSecrets(t.deps, original).password);
  });

  it("rule 7 on stage 2: a rule keyed by the Тест copy's uuid is applied on the 1 -> 2 deploy", async () => {
    const { w, dev } = await world();
    const toTest = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'data_source', id: dev.sourceId }] }),
    );
    const testCopy = ok<Source>(
      await api.get(`/api/data-source/${copyOf(toTest, 'data_source', dev.sourceId)}`, w.tokens.admin),
    );
    const ruleSettings = {
      host: 'prod-db.example',
      port: 5433,
      username: 'prod',
      password: RULE_SECRET,
      db: 'sales_prod',
    };
    ok(
      await api.put(
        `/api/pipeline/${w.pipelineId}/stage/2/data-source-rule`,
        { source_uuid: testCopy.uuid, settings: ruleSettings },
        w.tokens.admin,
      ),
    );
    const toProd = ok<DeployResult>(
      await deploy(api, w, { from_stage: 1, objects: [{ type: 'data_source', id: testCopy.id }] }),
    );
    expect(toProd.warnings).toEqual([]);
    const prodId = copyOf(toProd, 'data_source', testCopy.id);
    const res = await api.get(`/api/data-source/${prodId}`, w.tokens.admin);
    expect(JSON.stringify(res.body)).not.toContain(RULE_SECRET);
    const prod = ok<Source>(res);
    expect(prod.workspace_id).toBe(w.stages[2]);
    expect(prod.settings).toMatchObject({ host: 'prod-db.example', port: 5433, db: 'sales_prod', password_set: true });
    const [row] = await t.deps.db.select().from(dataSources).where(eq(dataSources.id, prodId));
    expect(openSecrets(t.deps, row).password).toBe(RULE_SECRET);
    // The stage-1 rule set does not leak into stage 2 and back: the Тест copy kept the source stage's connection.
    expect(testCopy.settings).not.toMatchObject({ host: 'prod-db.example' });
  });

  it('a materialised dataset: its extract data is not carried, a warning line says the copy needs a first synchronisation', async () => {
    const { w, dev } = await world();
    const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, w.tokens.admin));
    ok(await api.put(`/api/dataset/${dev.datasetId}`, { name: original.name, live: false }, w.tokens.admin));
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: dev.datasetId }] }),
    );
    expect(r.warnings).toContain(
      `Датасет «${original.name}» материализован: данные экстракта не переносятся, копии нужна первая синхронизация`,
    );
    const copy = ok<Dataset>(await api.get(`/api/dataset/${copyOf(r, 'dataset', dev.datasetId)}`, w.tokens.admin));
    expect(copy.live).toBe(false);
  });

  it('the refresh schedule and extraction settings of a dataset are not carried', async () => {
    const { w, dev } = await world();
    const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, w.tokens.admin));
    ok(await api.put(`/api/dataset/${dev.datasetId}`, { name: original.name, live: false }, w.tokens.admin));
    const schedule = { mode: 'full', schedule: '0 3 * * *', timezone: 'UTC', enabled: true };
    expect(
      ok<Extraction>(await api.put(`/api/dataset/${dev.datasetId}/extraction`, schedule, w.tokens.admin)),
    ).toMatchObject(schedule);
    const r = ok<DeployResult>(
      await deploy(api, w, { from_stage: 0, objects: [{ type: 'dataset', id: dev.datasetId }] }),
    );
    const copy = ok<Extraction>(
      await api.get(`/api/dataset/${copyOf(r, 'dataset', dev.datasetId)}/extraction`, w.tokens.admin),
    );
    expect(copy).toMatchObject({ schedule: null, enabled: false, last_run: null });
  });

  it('a deploy from Тест to Прод takes stage 1 objects to stage 2', async () => {
    const { w, dev } = await world();
    const first = await deployAll(api, w);
    const second = await deployAll(api, w, 1);
    expect(second).toMatchObject({ from_stage: 1, to_stage: 2 });
    expect(second.objects.map((o) => o.source_id)).toEqual(first.objects.map((o) => o.target_id));
    const widget = ok<Widget>(
      await api.get(`/api/widget/${copyOf(second, 'widget', copyOf(first, 'widget', dev.widgetId))}`, w.tokens.admin),
    );
    expect(widget.workspace_id).toBe(w.stages[2]);
  });
});

describe('deploy: refusals', () => {
  let w: PipelineWorld;
  let dev: StageObjects;
  beforeAll(async () => {
    ({ w, dev } = await world());
  });
  const links = () =>
    t.deps.db.select().from(pipelineObjectLinks).where(eq(pipelineObjectLinks.pipelineId, w.pipelineId));

  it.each([2, -1, 3])('from_stage %i: 400, nothing deployed', async (from) => {
    const res = await deploy(api, w, { from_stage: from, objects: [] });
    expect(res.status).toBe(400);
    expect(failure(res).message).toMatch(/^Ничего не развёрнуто: /);
  });

  it('an unknown type is a 422; the same object twice is a 422 on its path', async () => {
    const unknown = await deploy(api, w, { from_stage: 0, objects: [{ type: 'report', id: 1 }] });
    expect(unknown.status).toBe(422);
    expect(failure(unknown).message).toBe('Ошибка валидации');
    expect(failure(unknown).errors).toEqual({
      'objects[0].type': 'must be one of: data_source, dataset, widget, dashboard',
    });
    const twice = await deploy(api, w, {
      from_stage: 0,
      objects: [
        { type: 'widget', id: dev.widgetId },
        { type: 'widget', id: dev.widgetId },
      ],
    });
    expect(twice.status).toBe(422);
    expect(failure(twice).errors).toEqual({ 'objects[1]': `Объект указан дважды: widget ${dev.widgetId}` });
  });

  it('an object of another workspace or one that does not exist: 400 «Ничего не развёрнуто: ...», nothing deployed', async () => {
    const elsewhere = ok<{ id: number }>(
      await api.post('/api/dataset', { name: uniq('ds'), workspace_id: w.stages[1] }, w.tokens.admin),
    );
    for (const objects of [
      [{ type: 'dataset', id: elsewhere.id }],
      [
        { type: 'widget', id: dev.widgetId },
        { type: 'dashboard', id: 2_000_000_000 },
      ],
    ]) {
      const res = await deploy(api, w, { from_stage: 0, objects });
      expect(res.status).toBe(400);
      expect(failure(res).message).toMatch(/^Ничего не развёрнуто: .+ не найден в исходной стадии \(id \d+\)$/);
    }
    expect(await links()).toEqual([]);
  });

  it('rights: a role in the source stage but not Администратор in the receiving one: 403 «Доступ запрещён»', async () => {
    // Редактор and Наблюдатель in both stages: the error table's "deploy without rights" (the UI's hint stays the UI's).
    for (const token of [w.tokens.editor, w.tokens.viewer]) {
      const res = await deploy(api, w, { from_stage: 0, objects: [] }, token);
      expect(res.status).toBe(403);
      expect(failure(res).message).toBe('Доступ запрещён');
    }
    // No role at all in the receiving stage: the same.
    const admin1 = await createUser(t.deps);
    await addWorkspaceMember(t.deps, w.stages[1], { userId: admin1.id, role: 'Администратор' });
    const token = await login(api, admin1.username, admin1.password);
    const noTarget = await deploy(api, w, { from_stage: 1, objects: [] }, token);
    expect(noTarget.status).toBe(403);
    expect(failure(noTarget).message).toBe('Доступ запрещён');
    expect(await links()).toEqual([]);
  });

  it('rights: no role in the source stage (Администратор of the receiving one): 403 «Доступ запрещён»; not visible: 404', async () => {
    const admin1 = await createUser(t.deps);
    await addWorkspaceMember(t.deps, w.stages[1], { userId: admin1.id, role: 'Администратор' });
    const token = await login(api, admin1.username, admin1.password);
    const res = await deploy(api, w, { from_stage: 0, objects: [] }, token);
    expect(res.status).toBe(403);
    expect(failure(res).message).toBe('Доступ запрещён');
    // Someone who sees nothing of the pipeline: 404.
    const stranger = await createUser(t.deps);
    const hidden = await deploy(
      api,
      w,
      { from_stage: 0, objects: [] },
      await login(api, stranger.username, stranger.password),
    );
    expect(hidden.status).toBe(404);
    expect(failure(hidden).message).toBe(`Пайплайн не найден (id ${w.pipelineId})`);
    expect(await links()).toEqual([]);
  });

  it('an empty source stage with objects: []: 400 «Выберите объекты в левой колонке», nothing recorded', async () => {
    const empty = await createPipelineWorld(t.deps, api);
    const res = await deploy(api, empty, { from_stage: 1, objects: [] });
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Выберите объекты в левой колонке');
    const history = await t.deps.db
      .select()
      .from(pipelineDeployments)
      .where(eq(pipelineDeployments.pipelineId, empty.pipelineId));
    expect(history).toEqual([]);
  });

  it('an unbound stage: 400 «Обе стадии должны быть привязаны к пространствам»', async () => {
    ok(await api.delete(`/api/pipeline/${w.pipelineId}/stage/2`, w.tokens.admin));
    const res = await deploy(api, w, { from_stage: 1, objects: [] });
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe('Обе стадии должны быть привязаны к пространствам');
  });
});

describe('deploy: two at once into the same stage', () => {
  it('forced to overlap, they run one after the other: one creates, the other updates, no duplicates', async () => {
    const { w, dev } = await world();
    const body = { from_stage: 0, objects: [] };
    let pending: Promise<RestResponse>[] = [];
    await t.deps.db.transaction(async (tx) => {
      // Both deploys start while this transaction holds the pipeline row (the deploy's own lock) and blocks inserts
      // into data_sources: without the deploy's lock both would get past their reads, both take every object for new
      // and then create twice once this commits. Each test file has its own database, so the waiters are theirs.
      await tx.execute(sql`select id from pipelines where id = ${w.pipelineId} for update`);
      await tx.execute(sql`lock table data_sources in share mode`);
      pending = [deploy(api, w, body), deploy(api, w, body)];
      const waiting = async () =>
        (
          await tx.execute<{ n: number }>(sql`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`)
        ).rows[0].n;
      const deadline = Date.now() + 10_000;
      while ((await waiting()) < 2) {
        if (Date.now() > deadline) throw new Error('the two deploys never both waited');
        await new Promise((r) => setTimeout(r, 25));
      }
    });
    const results = (await Promise.all(pending)).map((res) => ok<DeployResult>(res));
    const actions = results.map((r) => r.objects.map((o) => o.action).join(',')).sort();
    expect(actions).toEqual(['created,created,created,created', 'updated,updated,updated,updated']);
    expect(results[0].objects.map((o) => o.target_id)).toEqual(results[1].objects.map((o) => o.target_id));
    expect(results[0].deployment_id).not.toBe(results[1].deployment_id);
    const target = w.stages[1];
    const ids = async (table: typeof widgets | typeof datasets | typeof dashboards | typeof dataSources) =>
      (await t.deps.db.select({ id: table.id }).from(table).where(eq(table.workspaceId, target))).map((x) => x.id);
    expect(await ids(dataSources)).toEqual([copyOf(results[0], 'data_source', dev.sourceId)]);
    expect(await ids(datasets)).toEqual([copyOf(results[0], 'dataset', dev.datasetId)]);
    expect(await ids(widgets)).toEqual([copyOf(results[0], 'widget', dev.widgetId)]);
    expect(await ids(dashboards)).toEqual([copyOf(results[0], 'dashboard', dev.dashboardId)]);
  });
});
