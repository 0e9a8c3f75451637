import { KPI_KIND, type ShelfField, type WidgetQueryInput } from './types';

/*
 * Widget queries that differ only in their measures (the same categories, filters, order, page, parameters and
 * calculated fields over one dataset) can be answered by one query computing every measure: a dashboard of eight
 * aggregations over one table then scans it once or twice instead of eight times. This module only proposes such
 * groups and the fused request; read.ts compiles both and fuses only when the compiled queries prove to have one
 * shape (assemble.ts shapeOf), so a proposal can never change a widget's answer.
 */

export interface WidgetCluster {
  /** Indexes of the queries in this group, in the order given. */
  members: number[];
  /** The one request answering every member (its measures renamed by fusedKey); absent for a lone member. */
  fused?: WidgetQueryInput;
}

/** The key of member `position`'s measure `key` in the fused request. */
export const fusedKey = (position: number, key: string) => `#${position}:${key}`;

const shelfShape = ({ id: _id, alias: _alias, ...rest }: ShelfField) => rest;

/** What must be equal for two queries to share one: everything but the measures; null when it must run alone. */
function clusterKey(q: WidgetQueryInput): string | null {
  if (q.columns.length === 0) return null;
  const categories = [...q.rows, ...q.series];
  const position = new Map(categories.map((f, i) => [f.id, i]));
  const sorts: [number, string][] = [];
  for (const s of q.sorts) {
    const at = position.get(s.field_id);
    // An order by a measure is an order of its own.
    if (at === undefined) return null;
    sorts.push([at, s.direction]);
  }
  const parameters = Object.entries(q.parameters).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    q.type === KPI_KIND,
    q.rows.map(shelfShape),
    q.series.map(shelfShape),
    q.filters.map((f) => f.filter),
    sorts,
    q.calculatedFields.map((c) => c.def),
    parameters,
    q.page,
    q.pageSize,
  ]);
}

/** Groups the queries (of one dataset and viewer) that may be fused; every query is in exactly one group. */
export function clusterWidgetQueries(queries: readonly WidgetQueryInput[]): WidgetCluster[] {
  const byKey = new Map<string, number[]>();
  const clusters: WidgetCluster[] = [];
  queries.forEach((q, i) => {
    const key = clusterKey(q);
    if (key === null) clusters.push({ members: [i] });
    else byKey.set(key, [...(byKey.get(key) ?? []), i]);
  });
  for (const members of byKey.values()) {
    if (members.length === 1) {
      clusters.push({ members });
      continue;
    }
    const base = queries[members[0]];
    const columns = members.flatMap((m, position) =>
      queries[m].columns.map((c) => ({ ...c, id: fusedKey(position, c.id) })),
    );
    clusters.push({ members, fused: { ...base, columns } });
  }
  return clusters;
}
