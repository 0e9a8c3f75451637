import { asc, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { widgets } from '../../db/schema/widgets';
import type { CalculatedFieldDef, FilterSpec, ShelfField, SortSpec } from '../query/compile/types';

export type WidgetRow = typeof widgets.$inferSelect;

/** What a widget saves besides its name, kind and dataset: the shelves and their companions, as the wire has them. */
export interface WidgetConfig {
  rows: ShelfField[];
  series: ShelfField[];
  columns: ShelfField[];
  filters: FilterSpec[];
  sorts: SortSpec[];
  calculated_fields: CalculatedFieldDef[];
}

export function configOf(row: WidgetRow): WidgetConfig {
  const c = (row.config ?? {}) as Partial<WidgetConfig>;
  return {
    rows: c.rows ?? [],
    series: c.series ?? [],
    columns: c.columns ?? [],
    filters: c.filters ?? [],
    sorts: c.sorts ?? [],
    calculated_fields: c.calculated_fields ?? [],
  };
}

export function widgetView(row: WidgetRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    dataset_id: row.datasetId,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    ...configOf(row),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type WidgetView = ReturnType<typeof widgetView>;

/** A widget as another object's dependents list names it. */
export interface WidgetRef {
  id: number;
  name: string;
  workspaceId: number;
  datasetId: number;
}

/** The widgets built on any of the datasets (they block a dataset's deletion), by `order`. */
export async function widgetsOnDatasets(
  db: DbOrTx,
  datasetIds: number[],
  order: 'name' | 'id' = 'name',
): Promise<WidgetRef[]> {
  if (datasetIds.length === 0) return [];
  return db
    .select({ id: widgets.id, name: widgets.name, workspaceId: widgets.workspaceId, datasetId: widgets.datasetId })
    .from(widgets)
    .where(inArray(widgets.datasetId, datasetIds))
    .orderBy(...(order === 'name' ? [asc(widgets.name), asc(widgets.id)] : [asc(widgets.id)]));
}

/** The widgets of the given ids, each with its workspace and dataset (a dashboard layout checks what it names). */
export async function widgetRefsById(db: DbOrTx, ids: number[]): Promise<Map<number, WidgetRef>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: widgets.id, name: widgets.name, workspaceId: widgets.workspaceId, datasetId: widgets.datasetId })
    .from(widgets)
    .where(inArray(widgets.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The widgets of a workspace. */
export async function widgetsInWorkspace(db: DbOrTx, workspaceId: number): Promise<WidgetRef[]> {
  return db
    .select({ id: widgets.id, name: widgets.name, workspaceId: widgets.workspaceId, datasetId: widgets.datasetId })
    .from(widgets)
    .where(eq(widgets.workspaceId, workspaceId));
}
