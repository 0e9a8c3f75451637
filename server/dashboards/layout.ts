import type { FieldErrors } from '../kernel/errors';
import { formatFieldPath } from '../kernel/validation';
import { MSG } from './messages';

/*
 * The layout of a dashboard (GET and PUT /api/dashboard/{id}/schema): tabs, widget tiles on them, selectors (filter
 * controls bound to a dataset field, driving some of the dashboard's widgets) and dashboard parameters (values handed
 * to the widgets they drive). It is saved whole: what a save omits is gone. The rules that need the database (which
 * widgets and fields exist, and where) are checked here over what the caller loaded for the ids the layout names.
 */

export interface DashboardTab {
  id: string;
  name: string;
}

export interface DashboardItem {
  widget_id: number;
  /** The tab the tile is on; null when the dashboard has no tabs. */
  tab_id: string | null;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface DashboardSelector {
  id: string;
  name: string;
  /** The dataset field the control filters on. */
  field_id: number;
  /** The filter operator the control applies (`in` for a list of values, `between` for a range, ...). */
  op: string;
  /** The control's saved (default) values. */
  values: (string | number | boolean | null)[];
  /** The widgets of this dashboard the control filters. */
  widget_ids: number[];
}

export interface DashboardParameter {
  /** A dataset parameter name the driven widgets' datasets declare. */
  name: string;
  value: string | number | boolean | null;
  widget_ids: number[];
}

export interface DashboardLayout {
  tabs: DashboardTab[];
  items: DashboardItem[];
  selectors: DashboardSelector[];
  parameters: DashboardParameter[];
}

/** A saved layout (checked when it was saved); a dashboard never saved has `{}`. */
export function layoutOf(saved: unknown): DashboardLayout {
  const l = (saved ?? {}) as Partial<DashboardLayout>;
  return { tabs: l.tabs ?? [], items: l.items ?? [], selectors: l.selectors ?? [], parameters: l.parameters ?? [] };
}

/** Distinct widget ids the layout shows (tiles), in the order of the tiles. */
export const widgetIdsOf = (layout: DashboardLayout): number[] => [...new Set(layout.items.map((i) => i.widget_id))];

/** Every widget id the layout names anywhere (tiles, selectors, parameters). */
export function referencedWidgetIds(layout: DashboardLayout): number[] {
  const ids = new Set<number>();
  for (const item of layout.items) ids.add(item.widget_id);
  for (const s of layout.selectors) for (const id of s.widget_ids) ids.add(id);
  for (const p of layout.parameters) for (const id of p.widget_ids) ids.add(id);
  return [...ids];
}

/** The layout without a widget: its tiles go, and selectors and parameters stop driving it. */
export function withoutWidget(layout: DashboardLayout, widgetId: number): DashboardLayout {
  return {
    tabs: layout.tabs,
    items: layout.items.filter((i) => i.widget_id !== widgetId),
    selectors: layout.selectors.map((s) => ({ ...s, widget_ids: s.widget_ids.filter((id) => id !== widgetId) })),
    parameters: layout.parameters.map((p) => ({ ...p, widget_ids: p.widget_ids.filter((id) => id !== widgetId) })),
  };
}

/** The layout with its widget ids replaced through `map` (a copy whose widgets were cloned). */
export function remapWidgets(layout: DashboardLayout, map: (id: number) => number): DashboardLayout {
  return {
    tabs: layout.tabs,
    items: layout.items.map((i) => ({ ...i, widget_id: map(i.widget_id) })),
    selectors: layout.selectors.map((s) => ({ ...s, widget_ids: s.widget_ids.map(map) })),
    parameters: layout.parameters.map((p) => ({ ...p, widget_ids: p.widget_ids.map(map) })),
  };
}

/** What the database says about the widgets and fields a layout names. */
export interface LayoutRefs {
  /** Widgets that exist, with their workspace and dataset. */
  widgets: Map<number, { workspaceId: number; datasetId: number }>;
  /** Dataset fields that exist, with their dataset's id and workspace. */
  fields: Map<number, { datasetId: number; workspaceId: number }>;
}

/**
 * Every problem of the layout at once, keyed by the element's path (`items[0].widgetId`); empty when it may be saved.
 * A layout may name only widgets (and fields) of the dashboard's own workspace: an unknown widget and another
 * workspace's look the same (so that the answer does not tell one from the other).
 */
export function layoutProblems(layout: DashboardLayout, workspaceId: number, refs: LayoutRefs): FieldErrors {
  const errors: FieldErrors = {};
  const fail = (path: (string | number)[], message: string) => {
    errors[formatFieldPath(path)] ??= message;
  };
  const widgetOk = (id: number) => refs.widgets.get(id)?.workspaceId === workspaceId;

  const tabIds = new Set<string>();
  layout.tabs.forEach((tab, i) => {
    if (tabIds.has(tab.id)) fail(['tabs', i, 'id'], MSG.duplicateId(tab.id));
    tabIds.add(tab.id);
  });

  const placed = new Set<number>();
  layout.items.forEach((item, i) => {
    if (!widgetOk(item.widget_id)) fail(['items', i, 'widget_id'], MSG.widgetNotFound(item.widget_id));
    else placed.add(item.widget_id);
    if (item.tab_id === null) {
      if (tabIds.size > 0) fail(['items', i, 'tab_id'], MSG.tabRequired);
    } else if (tabIds.size === 0) fail(['items', i, 'tab_id'], MSG.noTabs);
    else if (!tabIds.has(item.tab_id)) fail(['items', i, 'tab_id'], MSG.tabNotFound(item.tab_id));
  });

  /** Driven widgets must be tiles of this layout (and, for a selector, built on the field's dataset). */
  const checkDriven = (path: (string | number)[], ids: number[], datasetId?: number) =>
    ids.forEach((id, j) => {
      if (!widgetOk(id)) fail([...path, j], MSG.widgetNotFound(id));
      else if (!placed.has(id)) fail([...path, j], MSG.widgetNotPlaced(id));
      else if (datasetId !== undefined && refs.widgets.get(id)!.datasetId !== datasetId)
        fail([...path, j], MSG.otherDataset(id));
    });

  const selectorIds = new Set<string>();
  layout.selectors.forEach((s, i) => {
    if (selectorIds.has(s.id)) fail(['selectors', i, 'id'], MSG.duplicateId(s.id));
    selectorIds.add(s.id);
    const field = refs.fields.get(s.field_id);
    const fieldOk = field?.workspaceId === workspaceId;
    if (!fieldOk) fail(['selectors', i, 'field_id'], MSG.fieldNotFound(s.field_id));
    checkDriven(['selectors', i, 'widget_ids'], s.widget_ids, fieldOk ? field.datasetId : undefined);
  });

  const names = new Set<string>();
  layout.parameters.forEach((p, i) => {
    if (names.has(p.name)) fail(['parameters', i, 'name'], MSG.duplicateName(p.name));
    names.add(p.name);
    checkDriven(['parameters', i, 'widget_ids'], p.widget_ids);
  });
  return errors;
}
