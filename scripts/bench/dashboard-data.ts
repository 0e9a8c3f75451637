/**
 * Dashboard data against its slowest widget, in one run: POST /api/dashboard/{id}/data for a dashboard of 8 widgets
 * (each a different aggregation over one generated PostgreSQL table) against POST /api/widget/{id}/data of each widget
 * alone, over keep-alive HTTP to the listening app, with the result cache off (every read runs its query: a cold
 * cache). The goal: the dashboard takes at most its slowest widget plus 20 % (the widgets run concurrently).
 *
 *   npx tsx scripts/bench/dashboard-data.ts     (SOURCE_PG_URL, ROWS, RUNS to change the defaults)
 *
 * The source table lives in the local PostgreSQL (127.0.0.1:5432, database test) and is created once and reused. The
 * metadata store is a throwaway database on the same server (or DATABASE_URL).
 */
import os from 'node:os';
import { dashboardSalesDataset, dashboardSalesTable, ensureDashboardSales } from './dashboard-sales';
import { benchPlatform, call, createWidgets, dashboardOf } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const TABLE = dashboardSalesTable(ROWS);
const RUNS = Number(process.env.RUNS ?? 7);

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  await ensureDashboardSales(SOURCE_URL, ROWS);
  const bench = await benchPlatform({
    name: 'dashboard',
    server: SOURCE_URL,
    engine: { ttlMs: 0 }, // no result cache: every read runs its query
  });
  const { base, token } = bench;
  try {
    const datasetId = await dashboardSalesDataset(bench, SOURCE_URL, ROWS);
    const measures = ['SUM([sales.amount])', 'AVG([sales.qty])', 'COUNT()', 'MAX([sales.amount])'];
    const groups = ['[sales.grp]', '[sales.region]'];
    const widgetIds = await createWidgets(
      bench,
      Array.from({ length: 8 }, (_, i) => ({
        name: `w${i}`,
        type: 'table',
        dataset_id: datasetId,
        rows: [{ id: 'g', sql: groups[i % 2] }],
        columns: [{ id: 'm', sql: measures[i % 4] }],
      })),
    );
    const dashboardId = await dashboardOf(bench, widgetIds, (i) => ({ x: i % 4, y: Math.floor(i / 4), w: 1, h: 1 }));

    const timed = async (f: () => Promise<unknown>) => {
      const started = performance.now();
      await f();
      return performance.now() - started;
    };
    const alone = widgetIds.map(() => [] as number[]);
    const together: number[] = [];
    /** The floor on this machine: the eight widget calls sent at once by the client (no pool, no dashboard). */
    const atOnce: number[] = [];
    // Warm up connections and plans, then alternate: every widget alone, then the dashboard.
    await call(base, 'POST', `/api/dashboard/${dashboardId}/data`, {}, token);
    for (let r = 0; r < RUNS; r++) {
      for (const [i, id] of widgetIds.entries())
        alone[i].push(await timed(() => call(base, 'POST', `/api/widget/${id}/data`, { page_size: 2000 }, token)));
      together.push(await timed(() => call(base, 'POST', `/api/dashboard/${dashboardId}/data`, {}, token)));
      atOnce.push(
        await timed(() =>
          Promise.all(widgetIds.map((id) => call(base, 'POST', `/api/widget/${id}/data`, { page_size: 2000 }, token))),
        ),
      );
    }
    const slowest = Math.max(...alone.map(p50));
    const sum = alone.map(p50).reduce((a, b) => a + b, 0);
    const dash = p50(together);
    console.log(
      `\nnode ${process.version}, ${os.cpus().length} cores; source ${TABLE}; result cache off; ${RUNS} runs`,
    );
    console.log(`  widgets alone, p50 each: ${alone.map((xs) => ms(p50(xs))).join(', ')}`);
    console.log(`  slowest widget ${ms(slowest)}; all eight one after another ${ms(sum)}`);
    console.log(`  the eight widget calls sent at once by the client: ${ms(p50(atOnce))} p50 (this machine's floor)`);
    console.log(
      `  dashboard data of 8 widgets: ${ms(dash)} p50 = ${(dash / slowest).toFixed(2)}x the slowest widget (<= 1.20x: ${dash <= slowest * 1.2 ? 'met' : 'NOT met'})`,
    );
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
