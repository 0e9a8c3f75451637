import { createCitiesTable, dropTable, upload } from '../routers/data-sources/helpers';
import { pgSettings, randomName } from '../adapters/sources/servers';
import { uniq } from './factories';
import type { z } from 'zod';
import type { dataSourceView, queryView } from '../../routers/data-sources/schemas';
import type { datasetDetails } from '../../routers/datasets/schemas';
import type { widgetView } from '../../routers/widgets/schemas';
import type { listMembersOutput } from '../../routers/workspaces/schemas';
import { ok, type Rest, type RestResponse } from './rest';

/** One object of each kind in a workspace, made through REST, for tests that walk every operation. */
export interface WorkspaceObjects {
  workspaceId: number;
  sourceId: number;
  fileSourceId: number;
  datasetId: number;
  fieldId: number;
  widgetId: number;
  dashboardId: number;
  queryId: string;
  memberId: number;
  /** A row-level security rule of the dataset (for everyone, on its first field). */
  ruleId: number;
  /** A column-level security rule of the dataset (masks its city field for the author). */
  clsRuleId: number;
  /** A share link of the dashboard. */
  linkId: number;
  /** A rollup of the dataset (rollupOver) and a build of it. */
  rollupId: number;
  buildId: number;
  /** A table of three rows in the test PostgreSQL that the source and dataset read. */
  table: string;
  /** Drops the table (the objects themselves go with the test's database). */
  dispose(): Promise<void>;
}

/** The fixture dataset's schema: one object over `table`, its id and city columns. */
export const datasetSchemaOver = (sourceId: number, table: string) => ({
  objects: [{ id: -1, data_source_id: sourceId, name: 'cities', schema: 'public', table }],
  fields: [
    { id: -10, object_id: -1, column: 'id', primitive_type: 'integer' },
    { id: -11, object_id: -1, column: 'city', primitive_type: 'string' },
  ],
  relations: [],
  hierarchies: [],
  filters: [],
  parameters: [],
});

/** The fixture widget: a table of cities. */
export const widgetOver = (datasetId: number) => ({
  name: uniq('w'),
  type: 'table',
  dataset_id: datasetId,
  rows: [{ id: 'city', field: 'city', table: 'cities' }],
});

/** The fixture rollup: the count of the dataset's first field, refreshed on its own schedule (the dataset is live). */
export const rollupOver = (fieldId: number) => ({
  name: uniq('rollup'),
  dimensions: [],
  measures: [{ field_id: fieldId, aggregation: 'COUNT' }],
  refresh: { mode: 'schedule', cron: '0 3 * * *' },
});

function data<T>(what: string, res: RestResponse): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return ok<T>(res);
}

/**
 * Creates a PostgreSQL source, a CSV file source, a dataset over a real table (one object, two fields), a table
 * widget on it and a finished SQL console query, all in `workspaceId`, as `token` (who must be able to edit there).
 * `memberId` is the membership of `memberUserId` in the workspace (0 when none is asked for).
 */
export async function createWorkspaceObjects(
  api: Rest,
  token: string,
  workspaceId: number,
  memberUserId?: number,
): Promise<WorkspaceObjects> {
  const table = randomName('objects');
  await createCitiesTable('postgresql', table);
  const source = data<z.output<typeof dataSourceView>>(
    'source',
    await api.post(
      '/api/data-source',
      { name: uniq('src'), type: 'postgresql', settings: pgSettings(), workspace_id: workspaceId },
      token,
    ),
  );
  const file = data<{ id: number }>(
    'file source',
    await upload(
      api,
      'POST',
      '/api/files',
      token,
      { name: 'cities.csv', content: 'id,city\n1,Москва\n2,Казань\n' },
      { workspace_id: String(workspaceId) },
    ),
  );
  const dataset = data<z.output<typeof datasetDetails>>(
    'dataset',
    await api.post(
      '/api/dataset',
      { name: uniq('ds'), workspace_id: workspaceId, data_source_ids: [source.id] },
      token,
    ),
  );
  const schema = data<z.output<typeof datasetDetails>>(
    'dataset schema',
    await api.put(`/api/dataset/${dataset.id}/schema`, datasetSchemaOver(source.id, table), token),
  );
  const widget = data<z.output<typeof widgetView>>(
    'widget',
    await api.post('/api/widget', widgetOver(dataset.id), token),
  );
  const dashboard = data<{ id: number }>(
    'dashboard',
    await api.post('/api/dashboard', { name: uniq('dash'), workspace_id: workspaceId }, token),
  );
  data(
    'dashboard layout',
    await api.put(
      `/api/dashboard/${dashboard.id}/schema`,
      { items: [{ widget_id: widget.id, x: 0, y: 0, w: 6, h: 4 }] },
      token,
    ),
  );
  const link = data<{ link_id: number }>(
    'share link',
    await api.post(`/api/dashboard/${dashboard.id}/share-links`, { name: uniq('link') }, token),
  );
  const query = data<z.output<typeof queryView>>(
    'query',
    await api.post(`/api/data-source/${source.id}/queries`, { sql: 'select 1 as one' }, token),
  );
  const rule = data<{ id: number }>(
    'RLS rule',
    await api.post(
      `/api/dataset/${dataset.id}/rls-rules`,
      { field_id: schema.fields[0].id, attribute: 'region', operator: 'in' },
      token,
    ),
  );
  // Masks the city field for the author only: reads still answer (the values masked), filters on it are refused.
  const me = data<{ id: number }>('me', await api.get('/api/users/me', token));
  const clsRule = data<{ id: number }>(
    'CLS rule',
    await api.post(
      `/api/dataset/${dataset.id}/cls-rules`,
      { field_ids: [schema.fields[1].id], action: 'mask', user_ids: [me.id] },
      token,
    ),
  );
  const rollup = data<{ id: number }>(
    'rollup',
    await api.post(`/api/dataset/${dataset.id}/rollups`, rollupOver(schema.fields[0].id), token),
  );
  const build = data<{ build_id: number }>(
    'rollup build',
    await api.post(`/api/dataset/${dataset.id}/rollups/${rollup.id}/build`, {}, token),
  );
  let memberId = 0;
  if (memberUserId !== undefined) {
    const members = data<z.output<typeof listMembersOutput>>(
      'members',
      await api.get(`/api/workspaces/${workspaceId}/members`, token, { size: '1000' }),
    );
    const member = members.content.find((m) => m.user_id === memberUserId);
    if (!member) throw new Error(`user ${memberUserId} is not a member of workspace ${workspaceId}`);
    memberId = member.member_id;
  }
  return {
    workspaceId,
    sourceId: source.id,
    fileSourceId: file.id,
    datasetId: dataset.id,
    fieldId: schema.fields[0].id,
    widgetId: widget.id,
    dashboardId: dashboard.id,
    queryId: query.query_id,
    memberId,
    ruleId: rule.id,
    clsRuleId: clsRule.id,
    linkId: link.link_id,
    rollupId: rollup.id,
    buildId: build.build_id,
    table,
    dispose: () => dropTable('postgresql', table),
  };
}

/**
 * Values for the path parameters of an operation on the workspace's objects, by the path's first segment after
 * /api (`/api/data-source/{id}` is the source, `/api/dataset/{id}` the dataset, ...); undefined for a path that does
 * not address an object of the workspace (users, groups, tokens, source types, ...).
 */
export function pathValuesFor(path: string, o: WorkspaceObjects): Record<string, string> | undefined {
  const segment = path.split('/')[2];
  const byId: Record<string, number> = {
    'data-source': o.sourceId,
    dataset: o.datasetId,
    datasets: o.datasetId,
    widget: o.widgetId,
    dashboard: o.dashboardId,
    workspaces: o.workspaceId,
    files: o.fileSourceId,
  };
  if (!path.includes('{id}') || byId[segment] === undefined) return undefined;
  const ruleId = path.includes('/cls-rules/') ? o.clsRuleId : o.ruleId;
  return {
    id: String(byId[segment]),
    queryId: o.queryId,
    memberId: String(o.memberId),
    ruleId: String(ruleId),
    linkId: String(o.linkId),
    rollupId: String(o.rollupId),
    buildId: String(o.buildId),
    // Revision 1 of every object: the one its creation wrote.
    rev: '1',
  };
}
