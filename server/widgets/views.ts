import type { widgets } from '../../db/schema/widgets';
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
