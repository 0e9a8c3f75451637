import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { widgets } from '../../db/schema';

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

/**
 * Dashboards showing widgets of the dataset.
 * TODO: join the dashboards' widget items (db/schema/dashboards.ts) once the dashboards area adds its tables.
 */
export async function dashboardsUsingDataset(_db: DbOrTx, _datasetId: number): Promise<Dependent[]> {
  return [];
}
