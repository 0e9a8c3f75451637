import { eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { datasetSources, datasets } from '../../db/schema/datasets';
import { widgets } from '../../db/schema/widgets';
import { dashboardsNamingWidgets } from '../dashboards/store';

export interface SourceObject {
  type: 'dataset' | 'widget' | 'dashboard';
  id: number;
  name: string;
  workspace_id: number;
}

/**
 * Datasets built on the source (dataset_sources). They block its deletion: a source is deleted only once no
 * dataset names it.
 */
export async function sourceDependents(db: DbOrTx, sourceId: number): Promise<SourceObject[]> {
  const rows = await db
    .select({ id: datasets.id, name: datasets.name, workspaceId: datasets.workspaceId })
    .from(datasetSources)
    .innerJoin(datasets, eq(datasets.id, datasetSources.datasetId))
    .where(eq(datasetSources.dataSourceId, sourceId))
    .orderBy(datasets.name, datasets.id);
  return rows.map((r) => ({ type: 'dataset' as const, id: r.id, name: r.name, workspace_id: r.workspaceId }));
}

/**
 * Every platform object built on the source: its datasets, the widgets on those datasets and the dashboards whose
 * layouts name those widgets.
 */
export async function sourceObjects(db: DbOrTx, sourceId: number): Promise<SourceObject[]> {
  const sets = await sourceDependents(db, sourceId);
  if (sets.length === 0) return sets;
  const onThem = await db
    .select({ id: widgets.id, name: widgets.name, workspaceId: widgets.workspaceId })
    .from(widgets)
    .where(
      inArray(
        widgets.datasetId,
        sets.map((d) => d.id),
      ),
    )
    .orderBy(widgets.name, widgets.id);
  const showing = await dashboardsNamingWidgets(
    db,
    onThem.map((w) => w.id),
  );
  return [
    ...sets,
    ...onThem.map((w) => ({ type: 'widget' as const, id: w.id, name: w.name, workspace_id: w.workspaceId })),
    ...showing.map((d) => ({ type: 'dashboard' as const, id: d.id, name: d.name, workspace_id: d.workspaceId })),
  ];
}
