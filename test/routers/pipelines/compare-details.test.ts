import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { datasetDetails } from '../../../routers/datasets/schemas';
import type { widgetView } from '../../../routers/widgets/schemas';
import { useTestApp } from '../../support/app';
import { ok } from '../../support/rest';
import {
  compare,
  createPipelineWorld,
  createStageObjects,
  deploy,
  type CompareResult,
  type DeployResult,
  type PipelineWorld,
  type StageObjects,
  schemaSaveOf,
} from './deploy-world';

/*
 * GET /api/pipeline/{id}/compare?from=0&details=true: each changed object with the changed paths from what its last
 * deploy carried to the original now (revisions diffed); without details the answer is as before.
 */

type Dataset = z.output<typeof datasetDetails>;
type Widget = z.output<typeof widgetView>;
type Compared = CompareResult['objects'][number];

const { t, api } = useTestApp();
let w: PipelineWorld;
let dev: StageObjects;

beforeAll(async () => {
  w = await createPipelineWorld(t.deps, api);
  dev = await createStageObjects(api, w.tokens.admin, w.stages[0]);
  ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
  const token = w.tokens.admin;
  // The dataset: a field added, a formula changed.
  const original = ok<Dataset>(await api.get(`/api/dataset/${dev.datasetId}`, token));
  ok(
    await api.put(
      `/api/dataset/${dev.datasetId}/schema`,
      schemaSaveOf(original, {
        formula: () => '[cities.amount] * 4',
        add: [{ id: -1, name: 'triple', formula: '[cities.amount] * 3' }],
        keepFilters: true,
      }),
      token,
    ),
  );
  // The widget: a measure added to its columns shelf.
  const widget = ok<Widget>(await api.get(`/api/widget/${dev.widgetId}`, token));
  ok(
    await api.put(
      `/api/widget/${dev.widgetId}`,
      {
        name: widget.name,
        type: widget.type,
        dataset_id: dev.datasetId,
        rows: widget.rows,
        columns: [...widget.columns, { id: 'e', sql: 'COUNT([cities.id])' }],
        sorts: widget.sorts,
      },
      token,
    ),
  );
  // The dashboard: its one tile made wider.
  ok(
    await api.put(
      `/api/dashboard/${dev.dashboardId}/schema`,
      {
        items: [{ widget_id: dev.widgetId, x: 0, y: 0, w: 8, h: 4 }],
        selectors: [
          { id: 's1', name: 'Город', field_id: dev.fields.city, op: 'in', values: [], widget_ids: [dev.widgetId] },
        ],
      },
      token,
    ),
  );
});
afterAll(() => dev?.dispose());

const detailed = async (query: Record<string, string>) =>
  ok<CompareResult>(await api.get(`/api/pipeline/${w.pipelineId}/compare`, w.tokens.viewer, { from: '0', ...query }));
const of = (res: CompareResult, type: string, id: number): Compared =>
  res.objects.find((o) => o.type === type && o.id === id)!;

describe('GET /api/pipeline/{id}/compare?details=true', () => {
  it('without details (or details=false) no object carries changes', async () => {
    for (const res of [ok<CompareResult>(await compare(api, w, '0')), await detailed({ details: 'false' })]) {
      expect(res.objects.map((o) => o.status)).toEqual(['changed', 'changed', 'changed', 'changed']);
      for (const o of res.objects) expect(o).not.toHaveProperty('changes');
    }
  });

  it('lists the changed paths of each changed object since its last deploy, readable by a Наблюдатель', async () => {
    const res = await detailed({ details: 'true' });
    const dataset = of(res, 'dataset', dev.datasetId).changes!;
    const added = dataset.find((c) => c.change === 'added' && c.path.startsWith('children.dataset_fields[id='));
    expect(added).toMatchObject({ new: { name: 'triple', formula: '[cities.amount] * 3' } });
    expect(dataset).toContainEqual({
      path: `children.dataset_fields[id=${dev.fields.double}].formula`,
      change: 'changed',
      old: '[cities.amount] * 2',
      new: '[cities.amount] * 4',
    });
    expect(of(res, 'widget', dev.widgetId).changes).toEqual([
      { path: 'row.config.columns[id="e"]', change: 'added', new: { id: 'e', sql: 'COUNT([cities.id])' } },
    ]);
    expect(of(res, 'dashboard', dev.dashboardId).changes).toEqual([
      { path: `row.layout.items[widget_id=${dev.widgetId}].w`, change: 'changed', old: 6, new: 8 },
    ]);
    // A data source is changed at once after its first deploy: nothing in it changed.
    expect(of(res, 'data_source', dev.sourceId)).toMatchObject({ status: 'changed', changes: [] });
  });

  it('same, new and target_only objects carry no changes', async () => {
    // A second deploy makes everything same; a new widget in Разработка is new.
    ok<DeployResult>(await deploy(api, w, { from_stage: 0, objects: [] }));
    const res = await detailed({ details: 'true' });
    expect(of(res, 'widget', dev.widgetId)).toMatchObject({ status: 'same' });
    for (const o of res.objects.filter((x) => x.status !== 'changed')) expect(o).not.toHaveProperty('changes');
  });

  it('changes: null for an object without revisions (saved only before revisions were kept)', async () => {
    const widget = ok<Widget>(await api.get(`/api/widget/${dev.widgetId}`, w.tokens.admin));
    ok(
      await api.put(
        `/api/widget/${dev.widgetId}`,
        {
          name: `${widget.name} v3`,
          type: widget.type,
          dataset_id: dev.datasetId,
          rows: widget.rows,
          columns: widget.columns,
          sorts: widget.sorts,
        },
        w.tokens.admin,
      ),
    );
    expect(of(await detailed({ details: 'true' }), 'widget', dev.widgetId).changes).toEqual([
      { path: 'row.name', change: 'changed', old: widget.name, new: `${widget.name} v3` },
    ]);
    await t.deps.db.execute(
      sql`delete from object_revisions where object_type = 'widget' and object_id = ${dev.widgetId}`,
    );
    expect(of(await detailed({ details: 'true' }), 'widget', dev.widgetId)).toMatchObject({
      status: 'changed',
      changes: null,
    });
  });
});
