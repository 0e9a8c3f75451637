import type { z } from 'zod';
import type { compareOutput, deployOutput, listDeploymentsOutput } from '../../../routers/pipelines/deploy-schemas';
import type { pipelineView } from '../../../routers/pipelines/schemas';
import type { datasetDetails } from '../../../routers/datasets/schemas';
import type { AppDeps } from '../../../server/app/deps';
import { createSharedWorkspace, createUser, login, uniq, type TestUser } from '../../support/factories';
import { ok, type Rest } from '../../support/rest';
import { createCitiesTable, dropTable, randomName } from '../data-sources/helpers';
import { pgSettings } from '../../adapters/sources/servers';

// Answers of compare, deploy and the history, as the router's zod outputs describe them.
export type CompareResult = z.output<typeof compareOutput>;
export type DeployResult = z.output<typeof deployOutput>;
export type DeploymentPage = z.output<typeof listDeploymentsOutput>;
type PipelineView = z.output<typeof pipelineView>;

/**
 * A pipeline whose three stages are bound to three fresh shared workspaces where `admin` is Администратор, plus a
 * `viewer` who is Наблюдатель in all three, and an `editor` (Редактор in all three).
 */
export interface PipelineWorld {
  pipelineId: number;
  stages: [number, number, number];
  admin: TestUser;
  viewer: TestUser;
  editor: TestUser;
  tokens: { admin: string; viewer: string; editor: string };
}

export async function createPipelineWorld(deps: AppDeps, api: Rest): Promise<PipelineWorld> {
  const [admin, viewer, editor] = await Promise.all([createUser(deps), createUser(deps), createUser(deps)]);
  const members = [
    { userId: admin.id, role: 'Администратор' as const },
    { userId: viewer.id, role: 'Наблюдатель' as const },
    { userId: editor.id, role: 'Редактор' as const },
  ];
  const stages = [
    await createSharedWorkspace(deps, members),
    await createSharedWorkspace(deps, members),
    await createSharedWorkspace(deps, members),
  ] as [number, number, number];
  const tokens = {
    admin: await login(api, admin.username, admin.password),
    viewer: await login(api, viewer.username, viewer.password),
    editor: await login(api, editor.username, editor.password),
  };
  const pipeline = ok<PipelineView>(await api.post('/api/pipeline', { name: uniq('pipe') }, tokens.admin));
  for (const [order, workspaceId] of stages.entries())
    ok(await api.put(`/api/pipeline/${pipeline.id}/stage/${order}`, { workspace_id: workspaceId }, tokens.admin));
  return { pipelineId: pipeline.id, stages, admin, viewer, editor, tokens };
}

export const deploy = (api: Rest, w: PipelineWorld, body: Record<string, unknown>, token = w.tokens.admin) =>
  api.post(`/api/pipeline/${w.pipelineId}/deploy`, body, token);

export const compare = (api: Rest, w: PipelineWorld, from: string, token = w.tokens.admin) =>
  api.get(`/api/pipeline/${w.pipelineId}/compare`, token, { from });

/** The status of each object of the comparison, keyed `type:id`. */
export async function statuses(api: Rest, w: PipelineWorld, from = '0'): Promise<Record<string, string>> {
  const res = ok<CompareResult>(await compare(api, w, from));
  return Object.fromEntries(res.objects.map((o) => [`${o.type}:${o.id}`, o.status]));
}

/** A PostgreSQL source, a dataset over a real table (two objects joined, a calculated field, a hierarchy with a level
 * on it, a filter, a parameter), a widget on it and a dashboard showing the widget with a selector, made over REST. */
export interface StageObjects {
  sourceId: number;
  datasetId: number;
  fields: Record<'id' | 'city' | 'amount' | 'twinId' | 'double', number>;
  widgetId: number;
  dashboardId: number;
  table: string;
  dispose(): Promise<void>;
}

export async function createStageObjects(api: Rest, token: string, workspaceId: number): Promise<StageObjects> {
  const table = randomName('pipe');
  await createCitiesTable('postgresql', table);
  const source = ok<{ id: number }>(
    await api.post(
      '/api/data-source',
      { name: uniq('src'), type: 'postgresql', settings: pgSettings(), workspace_id: workspaceId },
      token,
    ),
  );
  const dataset = ok<{ id: number }>(
    await api.post(
      '/api/dataset',
      { name: uniq('ds'), workspace_id: workspaceId, data_source_ids: [source.id] },
      token,
    ),
  );
  const schema = ok<{
    fields: { id: number; name: string; object_id: number | null }[];
    objects: { id: number; name: string }[];
  }>(
    await api.put(
      `/api/dataset/${dataset.id}/schema`,
      {
        objects: [
          { id: -1, data_source_id: source.id, name: 'cities', schema: 'public', table },
          { id: -2, data_source_id: source.id, name: 'twin', schema: 'public', table },
        ],
        fields: [
          { id: -10, object_id: -1, column: 'id', primitive_type: 'integer' },
          { id: -11, object_id: -1, column: 'city', primitive_type: 'string' },
          { id: -12, object_id: -1, column: 'amount', primitive_type: 'float' },
          { id: -13, object_id: -2, name: 'twin_id', column: 'id', primitive_type: 'integer' },
          { id: -14, name: 'double', formula: '[cities.amount] * 2' },
        ],
        relations: [
          {
            id: -20,
            left_object_id: -1,
            right_object_id: -2,
            conditions: [{ left_field_id: -10, right_field_id: -13 }],
          },
        ],
        hierarchies: [{ id: -30, name: 'geo', field_ids: [-11, -14] }],
        filters: [{ id: -40, field_id: -10, op: 'gt', values: [0], value_type: 'integer' }],
        parameters: [{ id: -50, name: 'rate', primitive_type: 'number', default_value: '2' }],
      },
      token,
    ),
  );
  const field = (name: string) => schema.fields.find((f) => f.name === name)!.id;
  const widget = ok<{ id: number }>(
    await api.post(
      '/api/widget',
      {
        name: uniq('w'),
        type: 'table',
        dataset_id: dataset.id,
        rows: [{ id: 'city', field: 'city', table: 'cities' }],
        columns: [{ id: 'd', sql: 'SUM([cities.amount])' }],
        sorts: [{ field_id: 'city', direction: 'asc' }],
      },
      token,
    ),
  );
  const dashboard = ok<{ id: number }>(
    await api.post('/api/dashboard', { name: uniq('dash'), workspace_id: workspaceId }, token),
  );
  ok(
    await api.put(
      `/api/dashboard/${dashboard.id}/schema`,
      {
        items: [{ widget_id: widget.id, x: 0, y: 0, w: 6, h: 4 }],
        selectors: [
          { id: 's1', name: 'Город', field_id: field('city'), op: 'in', values: [], widget_ids: [widget.id] },
        ],
      },
      token,
    ),
  );
  return {
    sourceId: source.id,
    datasetId: dataset.id,
    fields: {
      id: field('id'),
      city: field('city'),
      amount: field('amount'),
      twinId: field('twin_id'),
      double: field('double'),
    },
    widgetId: widget.id,
    dashboardId: dashboard.id,
    table,
    dispose: () => dropTable('postgresql', table),
  };
}

type DatasetView = z.output<typeof datasetDetails>;

/**
 * The body of PUT /api/dataset/{id}/schema that saves `d` as it is but for the changes: calculated fields' formulas
 * through `formula`, the fields in `add`, and the dataset filters dropped unless `keepFilters`.
 */
export function schemaSaveOf(
  d: DatasetView,
  change: { formula?: (f: DatasetView['fields'][number]) => string | null; add?: object[]; keepFilters?: boolean },
) {
  return {
    objects: d.objects.map(({ id, data_source_id, name, schema, table }) => ({
      id,
      data_source_id,
      name,
      schema,
      table,
    })),
    fields: [
      ...d.fields.map((f) =>
        f.kind === 'physical'
          ? { id: f.id, object_id: f.object_id, name: f.name, column: f.column, primitive_type: f.primitive_type }
          : { id: f.id, name: f.name, formula: change.formula ? change.formula(f) : f.formula },
      ),
      ...(change.add ?? []),
    ],
    relations: d.relations,
    hierarchies: d.hierarchies,
    filters: change.keepFilters
      ? d.filters.map(({ id, field_id, op, values, value_type }) => ({ id, field_id, op, values, value_type }))
      : [],
    parameters: d.parameters.map(({ id, name, primitive_type, default_value }) => ({
      id,
      name,
      primitive_type,
      default_value,
    })),
  };
}
