import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorOf, type Actor } from '../../../server/auth/actor';
import { deployToNextStage, type DeployStep } from '../../../server/pipelines/deploy/deploy';
import { AppError } from '../../../server/kernel/errors';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import {
  createPipelineWorld,
  createStageObjects,
  type PipelineWorld,
  type StageObjects,
} from '../../routers/pipelines/deploy-world';

/*
 * A failure injected in the middle of a deploy (the test-only `faultAfter` option, not reachable over the API) leaves
 * the receiving stage exactly as it was: every object table and every schema table of its datasets, the copy links
 * and the history, row for row.
 */

const { t, api } = useTestApp();
let w: PipelineWorld;
let dev: StageObjects;
let actor: Actor;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
  dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
  actor = actorOf(
    t.deps,
    w.admin.id,
    { username: w.admin.username, accountType: 'local', active: true },
    [],
    'session',
  );
});
afterAll(() => dev?.dispose());

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

/** Every row the receiving stage and the pipeline hold, as JSON text per table. */
async function snapshot(): Promise<Record<string, string[]>> {
  const ws = w.stages[1];
  const out: Record<string, string[]> = {};
  const rows = async (name: string, where: ReturnType<typeof sql>) => {
    const res = await t.deps.db.execute<{ j: string }>(
      sql`select row_to_json(x)::text as j from ${sql.identifier(name)} x where ${where} order by 1`,
    );
    out[name] = res.rows.map((r) => r.j);
  };
  for (const name of ['data_sources', 'datasets', 'widgets', 'dashboards'])
    await rows(name, sql`x.workspace_id = ${ws}`);
  for (const name of DATASET_TABLES)
    await rows(name, sql`x.dataset_id in (select id from datasets where workspace_id = ${ws})`);
  await rows('data_source_metadata', sql`x.data_source_id in (select id from data_sources where workspace_id = ${ws})`);
  await rows('pipeline_object_links', sql`x.pipeline_id = ${w.pipelineId}`);
  await rows('pipeline_deployments', sql`x.pipeline_id = ${w.pipelineId}`);
  return out;
}

const STEPS: DeployStep[] = ['sources', 'datasets', 'widgets', 'dashboards', 'links'];

async function faulted(step: DeployStep) {
  const err = await deployToNextStage(
    t.deps,
    actor,
    w.pipelineId,
    { from_stage: 0, objects: [] },
    { faultAfter: step },
  ).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).status).toBe(400);
  expect((err as AppError).message).toBe('Ничего не развёрнуто: Внутренняя ошибка сервера');
}

describe('a fault in the middle of a deploy', () => {
  it.each(STEPS)('of the first deploy, after %s: the receiving stage stays empty', async (step) => {
    const before = await snapshot();
    await faulted(step);
    expect(await snapshot()).toEqual(before);
    expect(before.datasets).toEqual([]);
  });

  it.each(STEPS)(
    'of a repeated deploy (every original edited), after %s: the copies stay as they were',
    async (step) => {
      const count = (await snapshot()).pipeline_deployments.length;
      if (count === 0) await deployToNextStage(t.deps, actor, w.pipelineId, { from_stage: 0, objects: [] });
      // Edit every original: the repeated deploy would update every copy.
      const widget = ok<Record<string, unknown>>(await api.get(`/api/widget/${dev.widgetId}`, w.tokens.admin));
      ok(
        await api.put(
          `/api/widget/${dev.widgetId}`,
          {
            name: `${String(widget.name)}+`,
            type: widget.type,
            dataset_id: dev.datasetId,
            rows: widget.rows,
            columns: widget.columns,
          },
          w.tokens.admin,
        ),
      );
      ok(await api.put(`/api/dataset/${dev.datasetId}`, { name: `ds ${step}` }, w.tokens.admin));
      const before = await snapshot();
      expect(before.datasets).toHaveLength(1);
      await faulted(step);
      expect(await snapshot()).toEqual(before);
    },
  );

  it('without a fault the same deploy goes through', async () => {
    const r = await deployToNextStage(t.deps, actor, w.pipelineId, { from_stage: 0, objects: [] });
    expect(r.objects.map((o) => o.action)).toEqual(['updated', 'updated', 'updated', 'updated']);
  });
});
