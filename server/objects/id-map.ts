/*
 * Old id -> new id of everything one run of clones created. A deploy (pipelines: sources, datasets, widgets and
 * dashboards copied to another workspace in one transaction) clones in dependency order and passes the same map to
 * every clone, so that each copy points at the copies made before it: a dataset at the copied sources, a widget at
 * the copied dataset. A reference that is not in the map stays as it is (the copy keeps using the original).
 */

export interface IdMap {
  dataSources: Map<number, number>;
  datasets: Map<number, number>;
  /**
   * Dataset fields get new ids when their dataset is cloned. Widget shelves name fields by object and field name,
   * so widgets need no remapping; what refers to a field by id (dashboard filters) maps it through here.
   */
  datasetFields: Map<number, number>;
  widgets: Map<number, number>;
  dashboards: Map<number, number>;
}

export const emptyIdMap = (): IdMap => ({
  dataSources: new Map(),
  datasets: new Map(),
  datasetFields: new Map(),
  widgets: new Map(),
  dashboards: new Map(),
});

/** The new id of `id` if it was cloned in this run, else `id` itself. */
export const mapped = (map: Map<number, number>, id: number): number => map.get(id) ?? id;

/** Where a clone goes: the target workspace and the author the copy is recorded under; the name defaults to the original's. */
export interface CloneTarget {
  workspaceId: number;
  authorId: number | null;
  name?: string;
}
