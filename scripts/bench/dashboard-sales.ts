import { type BenchPlatform, createWidgets, dashboardOf, ensureTable, pgSourceRow, tableDataset } from './support';

/*
 * The sales table bench:dashboard and bench:viewers both read: one table per row count, made by whichever runs first,
 * and the same live dataset over it in each.
 */

export const dashboardSalesTable = (rows: number) => `bench_dashboard_${rows}`;

export function ensureDashboardSales(sourceUrl: string, rows: number): Promise<void> {
  return ensureTable(
    sourceUrl,
    dashboardSalesTable(rows),
    rows,
    `SELECT g AS id, (g % 1000) AS grp, (g % 7) AS region, ((g::bigint * 7919) % 100000) / 100.0 AS amount,
             (g % 5) + 1 AS qty, DATE '2024-01-01' + (g % 366) AS sold_on
      FROM generate_series(1, ${rows}) AS g`,
  );
}

/** A source row for the URL and a live dataset `bench` over the table, its object named sales: answers the dataset id. */
export async function dashboardSalesDataset(bench: BenchPlatform, sourceUrl: string, rows: number): Promise<number> {
  const source = await pgSourceRow(bench, sourceUrl);
  const { id } = await tableDataset(bench, {
    name: 'bench',
    sourceId: source.id,
    object: 'sales',
    table: dashboardSalesTable(rows),
    fields: [
      ['id', 'integer'],
      ['grp', 'integer'],
      ['region', 'integer'],
      ['amount', 'float'],
      ['qty', 'integer'],
      ['sold_on', 'date'],
    ],
  });
  return id;
}

/**
 * The viewers' dashboard of bench:viewers and bench:cluster: 8 widgets of the usual kinds over the dataset (grouped by
 * region, four measures) on one dashboard, two rows of four. Answers the widget ids and the dashboard id.
 */
export async function viewerDashboard(
  bench: BenchPlatform,
  datasetId: number,
): Promise<{ widgetIds: number[]; dashboardId: number }> {
  const kinds = ['bar', 'line', 'pie', 'table', 'kpi', 'bar', 'line', 'table'];
  const measures = ['SUM([sales.amount])', 'AVG([sales.qty])', 'COUNT()', 'MAX([sales.amount])'];
  const widgetIds = await createWidgets(
    bench,
    kinds.map((type, i) => ({
      name: `w${i}`,
      type,
      dataset_id: datasetId,
      rows: type === 'kpi' ? [] : [{ id: 'g', sql: '[sales.region]' }],
      columns: [{ id: 'm', sql: measures[i % 4] }],
    })),
  );
  const dashboardId = await dashboardOf(bench, widgetIds, (i) => ({
    x: (i % 4) * 3,
    y: Math.floor(i / 4) * 4,
    w: 3,
    h: 4,
  }));
  return { widgetIds, dashboardId };
}
