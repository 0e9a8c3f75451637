import type { Tx } from '../../../db/client';
import { badRequest } from '../../kernel/errors';
import { objectsInWorkspace } from '../../objects/in-workspace';
import { widgetIdsInLayouts } from '../../dashboards/store';
import { datasetsWithSources } from '../../datasets/store';
import { widgetsWithDatasets } from '../../widgets/store';
import type { DeployKind } from './map';
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

export async function selectObjects(tx: Tx, workspaceId: number, objects: ObjectRef[]): Promise<Selection> {
  if (objects.length === 0) return objectsInWorkspace(tx, workspaceId);
  const chosen: Selection = { data_source: [], dataset: [], widget: [], dashboard: [] };
  for (const o of objects) chosen[o.type].push(o.id);
  const selection = await objectsInWorkspace(tx, workspaceId, chosen);
  for (const o of objects)
    if (!selection[o.type].includes(o.id))
      throw badRequest(`${OBJECT_LABEL[o.type]} не найден в исходной стадии (id ${o.id})`);
  return withDependencies(tx, workspaceId, selection);
}

const unique = (ids: number[]) => [...new Set(ids)];

/** The selection closed over its dependencies, in four statements whatever its size. */
async function withDependencies(tx: Tx, workspaceId: number, s: Selection): Promise<Selection> {
  const named = await widgetIdsInLayouts(tx, s.dashboard);
  const widgets = await widgetsWithDatasets(tx, workspaceId, unique([...s.widget, ...named]));
  const datasets = await datasetsWithSources(
    tx,
    workspaceId,
    unique([...s.dataset, ...widgets.map((w) => w.datasetId)]),
  );
  const sourceIds = unique([...s.data_source, ...datasets.flatMap((d) => d.dataSourceIds)]);
  const sources = await objectsInWorkspace(tx, workspaceId, { data_source: sourceIds });
  return {
    data_source: sources.data_source,
    dataset: datasets.map((d) => d.id),
    widget: widgets.map((w) => w.id),
    dashboard: s.dashboard,
  };
}
