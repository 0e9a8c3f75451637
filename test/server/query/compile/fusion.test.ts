import { describe, expect, it } from 'vitest';
import { clusterWidgetQueries, fusedKey } from '../../../../server/query/compile/fusion';
import type { WidgetQueryInput } from '../../../../server/query/compile/types';

/* Which widget queries may share one query (server/query/compile/fusion.ts): only those differing in measures. */

const q = (over: Partial<WidgetQueryInput> = {}): WidgetQueryInput => ({
  type: 'table',
  rows: [{ id: 'p', sql: '[sales.product]' }],
  series: [],
  columns: [{ id: 'm', sql: 'SUM([sales.qty])' }],
  filters: [],
  sorts: [],
  calculatedFields: [],
  parameters: {},
  page: 1,
  pageSize: 100,
  ...over,
});

describe('clusterWidgetQueries', () => {
  it('groups queries that differ only in measures, ids, aliases and flat type; renames the measures apart', () => {
    const clusters = clusterWidgetQueries([
      q(),
      q({
        type: 'bar',
        rows: [{ id: 'x', alias: 'Товар', sql: '[sales.product]' }],
        columns: [{ id: 'm', sql: 'COUNT()' }],
      }),
    ]);
    expect(clusters).toHaveLength(1);
    expect(clusters[0].members).toEqual([0, 1]);
    expect(clusters[0].fused!.rows).toEqual([{ id: 'p', sql: '[sales.product]' }]);
    expect(clusters[0].fused!.columns.map((c) => c.id)).toEqual([fusedKey(0, 'm'), fusedKey(1, 'm')]);
  });

  it('keeps apart what changes the rows, groups, order or page', () => {
    const base = q();
    const others = [
      q({ type: 'kpi' }),
      q({ rows: [{ id: 'p', sql: '[sales.region_id]' }] }),
      q({ filters: [{ path: 'filters[0]', filter: { sql: '[sales.qty]', op: 'gt', values: [1] } }] }),
      q({ sorts: [{ field_id: 'p', direction: 'desc' }] }),
      q({ parameters: { rate: 2 } }),
      q({ page: 2 }),
      q({ pageSize: 10 }),
      q({ calculatedFields: [{ path: 'calculatedFields[0]', def: { name: 'c', sql: '[sales.qty] * 2' } }] }),
    ];
    const clusters = clusterWidgetQueries([base, ...others]);
    expect(clusters.map((c) => c.members)).toEqual(others.map(() => expect.any(Array)).concat([expect.any(Array)]));
    expect(clusters.every((c) => c.members.length === 1 && !c.fused)).toBe(true);
  });

  it('never fuses a query ordered by a measure or without measures', () => {
    const byMeasure = q({ sorts: [{ field_id: 'm', direction: 'desc' }] });
    const clusters = clusterWidgetQueries([byMeasure, { ...byMeasure }, q({ columns: [] }), q({ columns: [] })]);
    expect(clusters.map((c) => c.members)).toEqual([[0], [1], [2], [3]]);
  });
});
