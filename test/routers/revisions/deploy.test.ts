import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { revisionDetails, revisionDiff, revisionPage } from '../../../routers/revisions/router';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import {
  createPipelineWorld,
  createStageObjects,
  deploy,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
} from '../pipelines/deploy-world';

type RevisionPage = z.output<typeof revisionPage>;
type RevisionDetails = z.output<typeof revisionDetails>;
type RevisionDiff = z.output<typeof revisionDiff>;

/*
 * A deploy writes one revision ('deployed', with the deployment id and the deploying user) for every copy it writes
 * in the receiving stage.
 */

const { t, api } = useTestApp();
let w: PipelineWorld;
let dev: StageObjects;

const BASE = {
  data_source: '/api/data-source',
  dataset: '/api/dataset',
  widget: '/api/widget',
  dashboard: '/api/dashboard',
};

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
  dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
});
afterAll(async () => {
  await dev.dispose();
});

const revisionsOf = async (type: keyof typeof BASE, id: number) =>
  ok<RevisionPage>(await api.get(`${BASE[type]}/${id}/revisions`, w.tokens.admin)).content;

describe('deploy revisions', () => {
  it("records every copy as 'deployed' with the deployment id; a redeploy after an edit is the next revision", async () => {
    const first = ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
    expect(first.objects).toHaveLength(4);
    for (const o of first.objects) {
      const revs = await revisionsOf(o.type, o.target_id);
      expect(revs.map((r) => [r.rev, r.change, r.deployment_id, r.author?.id])).toEqual([
        [1, 'deployed', first.deployment_id, w.admin.id],
      ]);
    }
    const widgetCopy = first.objects.find((o) => o.type === 'widget')!.target_id;
    const datasetCopy = first.objects.find((o) => o.type === 'dataset')!.target_id;
    const copied = ok<RevisionDetails>(await api.get(`/api/dataset/${datasetCopy}/revisions/1`, w.tokens.admin));
    expect(copied.snapshot.row).toMatchObject({ id: datasetCopy, workspace_id: w.stages[1] });
    expect(copied.snapshot.children!.dataset_fields.map((f) => f.name).sort()).toEqual(
      ['amount', 'city', 'double', 'id', 'twin_id'].sort(),
    );
    expect(copied.snapshot.children!.dataset_relations).toHaveLength(1);

    // An edit in Разработка, deployed again: the copy's second revision, with the second deployment's id.
    const original = ok<Record<string, unknown> & { name: string }>(
      await api.get(`/api/widget/${dev.widgetId}`, w.tokens.admin),
    );
    const body = Object.fromEntries(
      ['type', 'dataset_id', 'rows', 'series', 'columns', 'filters', 'sorts', 'calculated_fields'].map((k) => [
        k,
        original[k],
      ]),
    );
    const edited = await api.put(`/api/widget/${dev.widgetId}`, { ...body, name: 'Другое имя' }, w.tokens.admin);
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const second = ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
    const revs = await revisionsOf('widget', widgetCopy);
    expect(revs.map((r) => [r.rev, r.change, r.deployment_id])).toEqual([
      [2, 'deployed', second.deployment_id],
      [1, 'deployed', first.deployment_id],
    ]);
    const changes = ok<RevisionDiff>(
      await api.get(`/api/widget/${widgetCopy}/revisions/1/diff`, w.tokens.admin),
    ).changes;
    expect(changes).toContainEqual({ path: 'row.name', change: 'changed', old: original.name, new: 'Другое имя' });
  });
});
