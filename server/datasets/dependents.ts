import type { DbOrTx } from '../../db/client';
import { dashboardsNamingWidgets } from '../dashboards/store';
import { widgetsOnDatasets } from '../widgets/views';

export interface Dependent {
  id: number;
  name: string;
  workspace_id: number;
}

/** Widgets built on the dataset: they block its deletion and are listed by /dependencies. */
export async function widgetsUsingDataset(db: DbOrTx, datasetId: number): Promise<Dependent[]> {
  const rows = await widgetsOnDatasets(db, [datasetId], 'id');
  return rows.map((w) => ({ id: w.id, name: w.name, workspace_id: w.workspaceId }));
}

/** Dashboards whose layout shows (or drives) widgets of the dataset: listed by /dependencies. */
export async function dashboardsUsingDataset(db: DbOrTx, datasetId: number): Promise<Dependent[]> {
  const onIt = await widgetsUsingDataset(db, datasetId);
  const rows = await dashboardsNamingWidgets(
    db,
    onIt.map((w) => w.id),
  );
  return rows.map((d) => ({ id: d.id, name: d.name, workspace_id: d.workspaceId }));
}
