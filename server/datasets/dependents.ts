import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import { dashboardsNamingWidgets } from '../dashboards/store';

export interface Dependent {
  id: number;
  name: string;
  workspace_id: number;
}

/** Widgets built on the dataset: they block its deletion and are listed by /dependencies. */
export async function widgetsUsingDataset(db: DbOrTx, datasetId: number): Promise<Dependent[]> {
  return db
    .select({ id: widgets.id, name: widgets.name, workspace_id: widgets.workspaceId })
    .from(widgets)
    .where(eq(widgets.datasetId, datasetId))
    .orderBy(asc(widgets.id));
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
