import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { rollbackOutput } from '../../../routers/pipelines/deploy-schemas';
import type { datasetDetails } from '../../../routers/datasets/schemas';
import type { widgetView } from '../../../routers/widgets/schemas';
import { actorOf } from '../../../server/auth/actor';
import { rollbackDeployment, type RollbackStep } from '../../../server/pipelines/deploy/rollback';
import { useTestApp } from '../../support/app';
import { createUser, login, uniq } from '../../support/factories';
import { failure, ok, type Rest } from '../../support/rest';
import {
  createPipelineWorld,
  createStageObjects,
  deploy,
  statuses,
  type DeploymentPage,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
  schemaSaveOf,
} from './deploy-world';

/*
 * POST /api/pipeline/{id}/deployments/{deploymentId}/rollback: a deploy of a dataset, two widgets and a dashboard
 * (with their source) from Разработка to Тест, edited in Разработка and deployed again, rolled back to the first
 * state (checked row by row, ids unchanged), then the first deploy rolled back (its objects gone); refusals when a
 * later deploy, an edit or an object outside the deploy depends on what it would change or delete; rights; a fault
 * in the middle leaves nothing changed.
 */

type Rollback = z.output<typeof rollbackOutput>;
type Dataset = z.output<typeof datasetDetails>;
type Widget = z.output<typeof widgetView>;

const { t, api } = useTestApp();
const disposals: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of disposals) await d();
});

/** The stage objects plus a second widget on the dataset, both on the dashboard. */
async function world(): Promise<{ w: PipelineWorld; dev: StageObjects; widget2: number }> {
  const w = await createPipelineWorld(t.deps, api);
  const dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
  disposals.push(dev.dispose);
  const widget2 = ok<{ id: number }>(
    await api.post(
      '/api/widget',
      {
        name: uniq('w2'),
        type: 'table',
        dataset_id: dev.datasetId,
        rows: [{ id: 'c', field: 'city', table: 'cities' }],
        columns: [{ id: 'n', sql: 'COUNT([cities.id])' }],
      },
      w.tokens.admin,
    ),
  ).id;
  ok(
    await api.put(
      `/api/dashboard/${dev.dashboardId}/schema`,
      {
        items: [
          { widget_id: dev.widgetId, x: 0, y: 0, w: 6, h: 4 },
          { widget_id: widget2, x: 6, y: 0, w: 6, h: 4 },
        ],
        selectors: [
          {
            id: 's1',
            name: 'Город',
            field_id: dev.fields.city,
            op: 'in',
            values: [],
            widget_ids: [dev.widgetId, widget2],
          },
        ],
      },
      w.tokens.admin,
    ),
  );
  return { w, dev, widget2 };
}

const deployAll = async (w: PipelineWorld) => ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
const rollback = (w: PipelineWorld, deploymentId: number, token = w.tokens.admin, r: Rest = api) =>
  r.post(`/api/pipeline/${w.pipelineId}/deployments/${deploymentId}/rollback`, {}, token);
const copyOf = (r: DeployResult, type: string, sourceId: number) =>
  r.objects.find((o) => o.type === type && o.source_id === sourceId)!.target_id;

const DATASET_TABLES = [
  'dataset_sources',
  'dataset_objects',
  'dataset_fields',
  'dataset_relations',
  'dataset_hierarchies',
  'dataset_filters',
  'dataset_parameters',
  'dataset_rls_rules',
  'dataset_cls_rules',
];

/**
 * Every row of the stage's objects and their datasets' schema tables, as JSON text per table, without the columns
 * every save moves (edit times, a dataset's version).
 */
async function stageRows(ws: number): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const rows = async (name: string, where: ReturnType<typeof sql>) => {
    const res = await t.deps.db.execute<{ j: string }>(sql`
      select (to_jsonb(x) - 'created_at' - 'updated_at' - 'version')::text as j
      from ${sql.identifier(name)} x where ${where} order by 1`);
    out[name] = res.rows.map((r) => r.j);
  };
  for (const name of ['data_sources', 'datasets', 'widgets', 'dashboards'])
    await rows(name, sql`x.workspace_id = ${ws}`);
  for (const name of DATASET_TABLES)
    await rows(name, sql`x.dataset_id in (select id from datasets where workspace_id = ${ws})`);
  return out;
}

/** Edits in Разработка: a field added and a formula changed, the filter dropped, both widgets' shelves, the layout. */
async function editDev(w: PipelineWorld, dev: StageObjects, widget2: number) {
  const token = w.tokens.admin;
  const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, token));
  ok(
    await api.put(
      `/api/dataset/${dev.datasetId}/schema`,
      schemaSaveOf(original, {
        formula: (f) => (f.name === 'double' ? '[cities.amount] * 4' : f.formula),
        add: [{ id: -1, name: 'triple', formula: '[cities.amount] * 3' }],
      }),
      token,
    ),
  );
  for (const [id, extra] of [
    [dev.widgetId, { id: 'e', sql: 'COUNT([cities.id])' }],
    [widget2, { id: 'm', sql: 'MAX([cities.amount])' }],
  ] as const) {
    const widget = ok<Widget>(await api.get(`/api/widget/${id}`, token));
    ok(
      await api.put(
        `/api/widget/${id}`,
        {
          name: `${widget.name} v2`,
          type: widget.type,
          dataset_id: dev.datasetId,
          rows: widget.rows,
          columns: [...widget.columns, extra],
          sorts: widget.sorts,
        },
        token,
      ),
    );
  }
  ok(
    await api.put(
      `/api/dashboard/${dev.dashboardId}/schema`,
      {
        items: [
          { widget_id: dev.widgetId, x: 0, y: 0, w: 8, h: 5 },
          { widget_id: widget2, x: 0, y: 5, w: 12, h: 4 },
        ],
        selectors: [],
      },
      token,
    ),
  );
}

describe('rollback: the Done-when scenario', () => {
  let w: PipelineWorld;
  let dev: StageObjects;
  let widget2: number;
  let first: DeployResult;
  let second: DeployResult;
  let afterFirst: Record<string, string[]>;
  let undoSecond: Rollback;
  beforeAll(async () => {
    ({ w, dev, widget2 } = await world());
    first = await deployAll(w);
    afterFirst = await stageRows(w.stages[1]);
    await editDev(w, dev, widget2);
    second = await deployAll(w);
  });

  it('the second deploy updated every copy in place', async () => {
    expect(first.objects.map((o) => [o.type, o.action])).toEqual([
      ['data_source', 'created'],
      ['dataset', 'created'],
      ['widget', 'created'],
      ['widget', 'created'],
      ['dashboard', 'created'],
    ]);
    expect(second.objects.map((o) => [o.type, o.target_id, o.action])).toEqual(
      first.objects.map((o) => [o.type, o.target_id, 'updated']),
    );
    const changed = await stageRows(w.stages[1]);
    expect(changed).not.toEqual(afterFirst);
    expect(changed.dataset_fields.some((f) => f.includes('"triple"'))).toBe(true);
    expect(changed.dataset_filters).toEqual([]);
  });

  it('rolling back the second deploy puts Тест back as the first deploy made it, row for row, ids unchanged', async () => {
    undoSecond = ok<Rollback>(await rollback(w, second.deployment_id));
    expect(undoSecond).toMatchObject({
      rolled_back_id: second.deployment_id,
      pipeline_id: w.pipelineId,
      from_stage: 0,
      to_stage: 1,
      warnings: [],
    });
    // Under the names they have again (the second deploy had renamed both widgets).
    expect(undoSecond.objects.map((o) => [o.type, o.source_id, o.target_id, o.action, o.name])).toEqual(
      first.objects.map((o) => [o.type, o.source_id, o.target_id, 'restored', o.name]),
    );
    expect(await stageRows(w.stages[1])).toEqual(afterFirst);
    // Over REST too: the dataset copy has its old formula and filter and no new field; the widget its old shelves.
    const dataset = ok<Dataset>(
      await api.get(`/api/dataset/${copyOf(first, 'dataset', dev.datasetId)}`, w.tokens.admin),
    );
    expect(dataset.fields.map((f) => f.name)).not.toContain('triple');
    expect(dataset.fields.find((f) => f.name === 'double')?.formula).toBe('[cities.amount] * 2');
    expect(dataset.filters).toHaveLength(1);
    const widget = ok<Widget>(await api.get(`/api/widget/${copyOf(first, 'widget', dev.widgetId)}`, w.tokens.admin));
    expect(widget.columns.map((c) => c.id)).toEqual(['d']);
    // The copy reads data again, on the restored definition.
    ok(await api.post(`/api/widget/${widget.id}/data`, {}, w.tokens.admin));
  });

  it('the restored objects got a rolled_back revision of the rollback; compare says changed again', async () => {
    const { rows } = await t.deps.db.execute<{ object_type: string; object_id: number; change: string }>(sql`
      select object_type, object_id, change from object_revisions where deployment_id = ${undoSecond.deployment_id}
      order by object_type, object_id`);
    expect(rows.map((r) => r.change)).toEqual(Array(5).fill('rolled_back'));
    expect(new Set(rows.map((r) => `${r.object_type}:${r.object_id}`))).toEqual(
      new Set(first.objects.map((o) => `${o.type}:${o.target_id}`)),
    );
    expect(await statuses(api, w)).toEqual({
      [`data_source:${dev.sourceId}`]: 'changed',
      [`dataset:${dev.datasetId}`]: 'changed',
      [`widget:${dev.widgetId}`]: 'changed',
      [`widget:${widget2}`]: 'changed',
      [`dashboard:${dev.dashboardId}`]: 'changed',
    });
  });

  it('the history shows the rollback as a deployment of its own, and the deploy it undid', async () => {
    const page = ok<DeploymentPage>(await api.get(`/api/pipeline/${w.pipelineId}/deployments`, w.tokens.viewer));
    const [undo, d2, d1] = page.content;
    expect(undo).toMatchObject({
      id: undoSecond.deployment_id,
      kind: 'rollback',
      rolled_back_id: second.deployment_id,
      rolled_back_by: null,
      from_stage: 0,
      to_stage: 1,
      username: w.admin.username,
      objects: undoSecond.objects,
    });
    expect(d2).toMatchObject({ id: second.deployment_id, kind: 'deploy', rolled_back_by: undoSecond.deployment_id });
    expect(d1).toMatchObject({ id: first.deployment_id, kind: 'deploy', rolled_back_id: null, rolled_back_by: null });
  });

  it('a deploy is rolled back once, and a rollback not at all', async () => {
    const again = await rollback(w, second.deployment_id);
    expect(again.status).toBe(400);
    expect(failure(again).message).toBe(`Развёртывание уже откачено (откат id ${undoSecond.deployment_id})`);
    const ofRollback = await rollback(w, undoSecond.deployment_id);
    expect(ofRollback.status).toBe(400);
    expect(failure(ofRollback).message).toBe('Откат нельзя откатить: разверните объекты заново');
  });

  it('rolling back the first deploy then deletes what it created; compare says new; a deploy creates them anew', async () => {
    const undoFirst = ok<Rollback>(await rollback(w, first.deployment_id));
    expect(undoFirst.objects.map((o) => [o.type, o.target_id, o.action])).toEqual(
      first.objects.map((o) => [o.type, o.target_id, 'deleted']),
    );
    const rows = await stageRows(w.stages[1]);
    for (const table of Object.keys(rows)) expect(rows[table]).toEqual([]);
    for (const o of first.objects) {
      const path = { data_source: 'data-source', dataset: 'dataset', widget: 'widget', dashboard: 'dashboard' }[o.type];
      expect((await api.get(`/api/${path}/${o.target_id}`, w.tokens.admin)).status).toBe(404);
    }
    expect(Object.values(await statuses(api, w))).toEqual(Array(5).fill('new'));
    const again = await deployAll(w);
    expect(again.objects.map((o) => o.action)).toEqual(Array(5).fill('created'));
  });
});

describe('rollback: compare afterwards', () => {
  it('an original not edited since the deploy before is same again, an edited one changed, a source changed', async () => {
    const { w, dev, widget2 } = await world();
    await deployAll(w);
    const widget = ok<Widget>(await api.get(`/api/widget/${dev.widgetId}`, w.tokens.admin));
    ok(
      await api.put(
        `/api/widget/${dev.widgetId}`,
        {
          name: `${widget.name} v2`,
          type: widget.type,
          dataset_id: dev.datasetId,
          rows: widget.rows,
          columns: widget.columns,
          sorts: widget.sorts,
        },
        w.tokens.admin,
      ),
    );
    const second = await deployAll(w);
    expect(Object.values(await statuses(api, w))).toEqual(Array(5).fill('same'));
    ok(await rollback(w, second.deployment_id));
    expect(await statuses(api, w)).toEqual({
      [`data_source:${dev.sourceId}`]: 'changed',
      [`dataset:${dev.datasetId}`]: 'same',
      [`widget:${dev.widgetId}`]: 'changed',
      [`widget:${widget2}`]: 'same',
      [`dashboard:${dev.dashboardId}`]: 'same',
    });
  });
});

describe('rollback: Тест -> Прод', () => {
  it('a deploy into Прод is rolled back the same way, Тест untouched', async () => {
    const { w } = await world();
    await deployAll(w);
    const test = await stageRows(w.stages[1]);
    const toProd = ok<DeployResult>(await deploy(api, w, { from_stage: 1, objects: [] }));
    expect((await stageRows(w.stages[2])).widgets).toHaveLength(2);
    const undo = ok<Rollback>(await rollback(w, toProd.deployment_id));
    expect(undo).toMatchObject({ from_stage: 1, to_stage: 2 });
    expect(undo.objects.map((o) => o.action)).toEqual(Array(5).fill('deleted'));
    const prod = await stageRows(w.stages[2]);
    for (const table of Object.keys(prod)) expect(prod[table]).toEqual([]);
    expect(await stageRows(w.stages[1])).toEqual(test);
    expect(Object.values(await statuses(api, w, '1'))).toEqual(Array(5).fill('new'));
  });
});

describe('rollback: refusals that name what depends on the change', () => {
  it('a later deploy changed the objects: the older deploy is refused, naming them, and nothing changes', async () => {
    const { w, dev, widget2 } = await world();
    const first = await deployAll(w);
    await editDev(w, dev, widget2);
    const second = await deployAll(w);
    const before = await stageRows(w.stages[1]);
    const res = await rollback(w, first.deployment_id);
    expect(res.status).toBe(400);
    const message = failure(res).message;
    expect(message).toMatch(/^Откат невозможен: /);
    const widgetCopy = copyOf(first, 'widget', dev.widgetId);
    const name = ok<Widget>(await api.get(`/api/widget/${widgetCopy}`, w.tokens.admin)).name;
    expect(message).toContain(
      `Виджет «${name}» (id ${widgetCopy}) изменён более поздним развёртыванием (id ${second.deployment_id})`,
    );
    for (const o of first.objects) expect(message).toContain(`(id ${o.target_id})`);
    expect(await stageRows(w.stages[1])).toEqual(before);
    // The later one first: then the older one goes through.
    ok(await rollback(w, second.deployment_id));
    ok(await rollback(w, first.deployment_id));
  });

  it('an edit in Тест after the deploy: refused (it would be lost), naming the object', async () => {
    const { w, dev } = await world();
    const first = await deployAll(w);
    const copy = copyOf(first, 'widget', dev.widgetId);
    const widget = ok<Widget>(await api.get(`/api/widget/${copy}`, w.tokens.admin));
    const renamed = uniq('edited in test');
    ok(
      await api.put(
        `/api/widget/${copy}`,
        {
          name: renamed,
          type: widget.type,
          dataset_id: widget.dataset_id,
          rows: widget.rows,
          columns: widget.columns,
          sorts: widget.sorts,
        },
        w.tokens.admin,
      ),
    );
    const before = await stageRows(w.stages[1]);
    const res = await rollback(w, first.deployment_id);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(
      `Откат невозможен: Виджет «${renamed}» (id ${copy}) изменён после развёртывания: откат потерял бы эти изменения`,
    );
    expect(await stageRows(w.stages[1])).toEqual(before);
  });

  it('a widget made later in Тест on a created dataset: refused naming it; once it is gone the rollback goes through', async () => {
    const { w, dev } = await world();
    const first = await deployAll(w);
    const datasetCopy = copyOf(first, 'dataset', dev.datasetId);
    const datasetName = ok<Dataset>(await api.get(`/api/dataset/${datasetCopy}`, w.tokens.admin)).name;
    const later = ok<Widget>(
      await api.post(
        '/api/widget',
        {
          name: uniq('made in test'),
          type: 'table',
          dataset_id: datasetCopy,
          rows: [{ id: 'c', field: 'city', table: 'cities' }],
        },
        w.tokens.admin,
      ),
    );
    const before = await stageRows(w.stages[1]);
    const res = await rollback(w, first.deployment_id);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(
      `Откат невозможен: Датасет «${datasetName}» (id ${datasetCopy}) нельзя удалить: от него зависит виджет «${later.name}» (id ${later.id}), созданный не этим развёртыванием`,
    );
    expect(await stageRows(w.stages[1])).toEqual(before);
    ok(await api.delete(`/api/widget/${later.id}`, w.tokens.admin));
    const undo = ok<Rollback>(await rollback(w, first.deployment_id));
    expect(undo.objects.every((o) => o.action === 'deleted')).toBe(true);
  });

  it('a dataset made later in Тест on a created source: refused naming it', async () => {
    const { w, dev } = await world();
    const first = await deployAll(w);
    const sourceCopy = copyOf(first, 'data_source', dev.sourceId);
    const sourceName = ok<{ name: string }>(await api.get(`/api/data-source/${sourceCopy}`, w.tokens.admin)).name;
    const later = ok<{ id: number; name: string }>(
      await api.post(
        '/api/dataset',
        { name: uniq('made in test'), workspace_id: w.stages[1], data_source_ids: [sourceCopy] },
        w.tokens.admin,
      ),
    );
    const before = await stageRows(w.stages[1]);
    const res = await rollback(w, first.deployment_id);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(
      `Откат невозможен: Источник данных «${sourceName}» (id ${sourceCopy}) нельзя удалить: от него зависит датасет «${later.name}» (id ${later.id}), созданный не этим развёртыванием`,
    );
    expect(await stageRows(w.stages[1])).toEqual(before);
  });

  it('an updated object without a revision from before the deploy (older than revisions): refused, naming it', async () => {
    const { w, dev, widget2 } = await world();
    const first = await deployAll(w);
    await editDev(w, dev, widget2);
    const second = await deployAll(w);
    const copy = copyOf(first, 'widget', dev.widgetId);
    await t.deps.db.execute(sql`delete from object_revisions where object_type = 'widget' and object_id = ${copy}
      and deployment_id is distinct from ${second.deployment_id}`);
    const name = ok<Widget>(await api.get(`/api/widget/${copy}`, w.tokens.admin)).name;
    const res = await rollback(w, second.deployment_id);
    expect(res.status).toBe(400);
    expect(failure(res).message).toBe(
      `Откат невозможен: Виджет «${name}» (id ${copy}): нет сохранённой версии до развёртывания`,
    );
  });

  it('a created object deleted by hand since is skipped with a warning line', async () => {
    const { w, dev } = await world();
    const first = await deployAll(w);
    const dashboardCopy = copyOf(first, 'dashboard', dev.dashboardId);
    ok(await api.delete(`/api/dashboard/${dashboardCopy}`, w.tokens.admin));
    const undo = ok<Rollback>(await rollback(w, first.deployment_id));
    expect(undo.objects.map((o) => o.type)).toEqual(['data_source', 'dataset', 'widget', 'widget']);
    expect(undo.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^Дашборд «.+» \\(id ${dashboardCopy}\\) удалён после развёртывания: пропущен$`),
      ),
    ]);
  });
});

describe('rollback: rights and unknown deployments', () => {
  let w: PipelineWorld;
  let first: DeployResult;
  beforeAll(async () => {
    ({ w } = await world());
    first = await deployAll(w);
  });

  it('a Наблюдатель or a Редактор of the receiving stage: 403 «Доступ запрещён»; nothing changes', async () => {
    const before = await stageRows(w.stages[1]);
    for (const token of [w.tokens.viewer, w.tokens.editor]) {
      const res = await rollback(w, first.deployment_id, token);
      expect(res.status).toBe(403);
      expect(failure(res).message).toBe('Доступ запрещён');
    }
    expect(await stageRows(w.stages[1])).toEqual(before);
  });

  it('someone who does not see the pipeline: 404; an unknown deployment or one of another pipeline: 404', async () => {
    const stranger = await createUser(t.deps);
    const res = await rollback(w, first.deployment_id, await login(api, stranger.username, stranger.password));
    expect(res.status).toBe(404);
    expect(failure(res).message).toBe(`Пайплайн не найден (id ${w.pipelineId})`);
    const unknown = await rollback(w, 2_000_000_000);
    expect(unknown.status).toBe(404);
    expect(failure(unknown).message).toBe('Развёртывание не найдено (id 2000000000)');
    const other = await createPipelineWorld(t.deps, api);
    const elsewhere = await rollback(other, first.deployment_id, w.tokens.admin);
    expect(elsewhere.status).toBe(404);
  });
});

describe('rollback: a fault in the middle', () => {
  const STEPS: RollbackStep[] = ['restore', 'delete', 'links', 'record'];

  it.each(STEPS)('after %s: Тест, the links, the history and the revisions stay as they were', async (step) => {
    const { w, dev, widget2 } = await world();
    await deployAll(w);
    await editDev(w, dev, widget2);
    // The dashboard alone is created by the second deploy (deleted by its rollback), the rest updated (restored).
    const newDashboard = ok<{ id: number }>(
      await api.post('/api/dashboard', { name: uniq('dash2'), workspace_id: w.stages[0] }, w.tokens.admin),
    );
    const second = await deployAll(w);
    expect(second.objects.filter((o) => o.action === 'created').map((o) => o.source_id)).toEqual([newDashboard.id]);
    const state = async () => ({
      rows: await stageRows(w.stages[1]),
      links: (
        await t.deps.db.execute(sql`select * from pipeline_object_links where pipeline_id = ${w.pipelineId}
          order by id`)
      ).rows,
      deployments: (
        await t.deps.db.execute(sql`select * from pipeline_deployments where pipeline_id = ${w.pipelineId}
          order by id`)
      ).rows,
      revisions: (
        await t.deps.db.execute(sql`select object_type, object_id, rev, change from object_revisions
          where (object_type, object_id) in (select o->>'type', (o->>'target_id')::int
            from pipeline_deployments d, jsonb_array_elements(d.objects) o where d.id = ${second.deployment_id})
          order by 1, 2, 3`)
      ).rows,
    });
    const before = await state();
    const actor = actorOf(
      t.deps,
      w.admin.id,
      { username: w.admin.username, accountType: 'local', active: true },
      [],
      'session',
    );
    await expect(
      rollbackDeployment(t.deps, actor, w.pipelineId, second.deployment_id, { faultAfter: step }),
    ).rejects.toThrow(`injected fault after ${step}`);
    expect(await state()).toEqual(before);
    // Without the fault it goes through.
    const done = await rollbackDeployment(t.deps, actor, w.pipelineId, second.deployment_id);
    expect(done.objects.filter((o) => o.action === 'deleted').map((o) => o.source_id)).toEqual([newDashboard.id]);
    expect(done.objects.filter((o) => o.action === 'restored')).toHaveLength(5);
  });
});
