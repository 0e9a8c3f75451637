import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { badRequest } from '../../kernel/errors';
import { DEPLOY_KINDS, ints, KIND_TABLE, type DeployKind } from './map';
import { OBJECT_LABEL } from './messages';

/*
 * What a deploy copies (POST /api/pipeline/{id}/deploy, spec rules 2 and 3): the chosen objects of the source stage,
 * or all of them for `objects: []`, with their dependencies (a dashboard brings the widgets its layout names, a widget
 * its dataset, a dataset its sources). Only objects of the source workspace are copied: a dataset reading a source of
 * another workspace keeps reading that source.
 */

export interface ObjectRef {
  type: DeployKind;
  id: number;
}

export type Selection = Record<DeployKind, number[]>;

const emptySelection = (): Selection => ({ data_source: [], dataset: [], widget: [], dashboard: [] });

export async function selectObjects(tx: Tx, workspaceId: number, objects: ObjectRef[]): Promise<Selection> {
  const chosen = emptySelection();
  for (const o of objects) chosen[o.type].push(o.id);
  const all = objects.length === 0;
  // One statement: every object of the workspace (all) or the chosen ones that are in it.
  const parts = DEPLOY_KINDS.map(
    (kind) => sql`select ${kind} as kind, id from ${sql.raw(KIND_TABLE[kind])}
      where workspace_id = ${workspaceId} ${all ? sql`` : sql`and id = any(${ints(chosen[kind])})`}`,
  );
  const found = await tx.execute<{ kind: DeployKind; id: number }>(sql.join(parts, sql` union all `));
  const selection = emptySelection();
  for (const r of found.rows) selection[r.kind].push(r.id);
  if (all) return selection;
  for (const o of objects)
    if (!selection[o.type].includes(o.id))
      throw badRequest(`${OBJECT_LABEL[o.type]} не найден в исходной стадии (id ${o.id})`);
  return withDependencies(tx, workspaceId, selection);
}

/** The selection closed over its dependencies, in three statements whatever its size. */
async function withDependencies(tx: Tx, workspaceId: number, s: Selection): Promise<Selection> {
  const widgets = await tx.execute<{ id: number }>(sql`
    select distinct w.id from widgets w
    where w.workspace_id = ${workspaceId} and (w.id = any(${ints(s.widget)}) or w.id in (
      select (x.value)::int from dashboards d,
        lateral (
          select i->>'widget_id' as value from jsonb_array_elements(coalesce(d.layout->'items', '[]')) i
          union select v from jsonb_array_elements(coalesce(d.layout->'selectors', '[]')) e,
            jsonb_array_elements_text(coalesce(e->'widget_ids', '[]')) v
          union select v from jsonb_array_elements(coalesce(d.layout->'parameters', '[]')) e,
            jsonb_array_elements_text(coalesce(e->'widget_ids', '[]')) v
        ) x
      where d.id = any(${ints(s.dashboard)})))`);
  const widgetIds = widgets.rows.map((r) => r.id);
  const datasets = await tx.execute<{ id: number }>(sql`
    select d.id from datasets d where d.workspace_id = ${workspaceId}
      and (d.id = any(${ints(s.dataset)}) or d.id in (select dataset_id from widgets where id = any(${ints(widgetIds)})))`);
  const datasetIds = datasets.rows.map((r) => r.id);
  const sources = await tx.execute<{ id: number }>(sql`
    select s.id from data_sources s where s.workspace_id = ${workspaceId}
      and (s.id = any(${ints(s.data_source)})
        or s.id in (select data_source_id from dataset_sources where dataset_id = any(${ints(datasetIds)})))`);
  return {
    data_source: sources.rows.map((r) => r.id),
    dataset: datasetIds,
    widget: widgetIds,
    dashboard: s.dashboard,
  };
}
