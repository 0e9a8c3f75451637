import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createUser, login } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import {
  createPipelineWorld,
  createStageObjects,
  deploy,
  type DeploymentPage,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
} from './deploy-world';

/* GET /api/pipeline/{id}/deployments: the deployment history (beyond the reference platform). */

const { t, api } = useTestApp();
let w: PipelineWorld;
let dev: StageObjects;
const results: DeployResult[] = [];

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
  dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
  results.push(
    ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [{ type: 'widget', id: dev.widgetId }] })),
  );
  results.push(ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] })));
  results.push(ok<DeployResult>(await deploy(api, w, { from_stage: 1, objects: [] })));
  // A refused deploy changes nothing and is not recorded.
  expect((await deploy(api, w, { from_stage: 0, objects: [{ type: 'widget', id: 2_000_000_000 }] })).status).toBe(400);
});
afterAll(() => dev?.dispose());

const history = (token: string, query: Record<string, string> = {}) =>
  api.get(`/api/pipeline/${w.pipelineId}/deployments`, token, query);

describe('GET /api/pipeline/{id}/deployments', () => {
  it('lists the successful deploys newest first: who, when, from which stage, the actions and the warnings', async () => {
    const page = ok<DeploymentPage>(await history(w.tokens.admin));
    expect(page.page).toMatchObject({ number: 0, total_elements: 3, total_pages: 1 });
    expect(page.content.map((d) => d.id)).toEqual([...results].reverse().map((r) => r.deployment_id));
    const [latest, , oldest] = page.content;
    expect(latest).toMatchObject({
      from_stage: 1,
      from_stage_name: 'Тест',
      to_stage: 2,
      to_stage_name: 'Прод',
      user_id: w.admin.id,
      username: w.admin.username,
    });
    expect(new Date(latest.created_at).getTime()).toBeGreaterThanOrEqual(new Date(oldest.created_at).getTime());
    expect(oldest.objects).toEqual(results[0].objects);
    expect(oldest.warnings).toEqual(results[0].warnings);
    expect(oldest.warnings.length).toBeGreaterThan(0);
    expect(page.content[1].objects.map((o) => o.action)).toEqual(['updated', 'updated', 'updated', 'created']);
  });

  it('pages from 0', async () => {
    const page = ok<DeploymentPage>(await history(w.tokens.admin, { page: '1', size: '2' }));
    expect(page.page).toMatchObject({ number: 1, size: 2, total_elements: 3, total_pages: 2 });
    expect(page.content.map((d) => d.id)).toEqual([results[0].deployment_id]);
  });

  it('readable by anyone who sees the pipeline (a Наблюдатель); 404 for someone who does not', async () => {
    expect(ok<DeploymentPage>(await history(w.tokens.viewer)).content).toHaveLength(3);
    const stranger = await createUser(t.deps);
    const res = await history(await login(api, stranger.username, stranger.password));
    expect(res.status).toBe(404);
    expect(failure(res).message).toBe(`Пайплайн не найден (id ${w.pipelineId})`);
  });
});
