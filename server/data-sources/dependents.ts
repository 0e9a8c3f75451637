import type { DbOrTx } from '../../db/client';
import { dashboardsNamingWidgets } from '../dashboards/store';
import { datasetsOnSource } from '../datasets/views';
import { widgetsOnDatasets } from '../widgets/views';

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
  const rows = await datasetsOnSource(db, sourceId);
  return rows.map((r) => ({ type: 'dataset' as const, id: r.id, name: r.name, workspace_id: r.workspaceId }));
}

/**
 * Every platform object built on the source: its datasets, the widgets on those datasets and the dashboards whose
 * layouts name those widgets.
 */
export async function sourceObjects(db: DbOrTx, sourceId: number): Promise<SourceObject[]> {
  const sets = await sourceDependents(db, sourceId);
  if (sets.length === 0) return sets;
  const onThem = await widgetsOnDatasets(
    db,
    sets.map((d) => d.id),
  );
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
