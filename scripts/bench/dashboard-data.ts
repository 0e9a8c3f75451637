/**
 * Dashboard data against its slowest widget, in one run: POST /api/dashboard/{id}/data for a dashboard of 8 widgets
 * (each a different aggregation over one generated PostgreSQL table) against POST /api/widget/{id}/data of each widget
 * alone, over keep-alive HTTP to the listening app, with the result cache off (every read runs its query: a cold
 * cache). The goal: the dashboard takes at most its slowest widget plus 20 % (the widgets run concurrently). Beside
 * it, the same work sent raw through a plain pg client, including one statement that answers every widget in a single
 * scan: the least work any plan can do, so the ratio no dashboard path on this machine can beat.
 *
 *   npx tsx scripts/bench/dashboard-data.ts     (SOURCE_PG_URL, ROWS, RUNS to change the defaults)
 *
 * The source table lives in the local PostgreSQL (127.0.0.1:5432, database test) and is created once and reused. The
 * metadata store is a throwaway database on the same server (or DATABASE_URL).
 */
import os from 'node:os';
import pg from 'pg';
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
    await rawBaselines(slowest);
  } finally {
    await bench.close();
  }
}

/**
 * What a user could run instead, through a plain pg client on the same server: each widget's SQL (hand-written
 * equivalents) alone and all eight at once, and one hand-written statement that answers all eight in a single scan
 * (the finer grouping aggregated once, then rolled up per widget grouping). The last is the least work any plan
 * can do for these eight answers; on a machine whose cores one widget's parallel scan already fills, it bounds what
 * the dashboard can reach.
 */
async function rawBaselines(slowestWidget: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: SOURCE_URL, max: 8 });
  try {
    const measures = ['SUM(amount)', 'AVG(qty)', 'COUNT(*)', 'MAX(amount)'];
    const groups = ['grp', 'region'];
    const widgetSql = Array.from(
      { length: 8 },
      (_, i) => `SELECT ${groups[i % 2]}, ${measures[i % 4]} FROM ${TABLE} GROUP BY 1 ORDER BY 1 LIMIT 2001`,
    );
    const oneScan = `WITH base AS (
        SELECT grp, region, SUM(amount) AS s, SUM(qty) AS sq, COUNT(qty) AS cq, COUNT(*) AS c, MAX(amount) AS mx
        FROM ${TABLE} GROUP BY grp, region)
      SELECT grp, region, SUM(s), SUM(sq)::numeric / SUM(cq), SUM(c), MAX(mx) FROM base
      GROUP BY GROUPING SETS ((grp), (region))`;
    const timed = async (f: () => Promise<unknown>) => {
      const started = performance.now();
      await f();
      return performance.now() - started;
    };
    await Promise.all(widgetSql.map((q) => pool.query(q)));
    const alone = widgetSql.map(() => [] as number[]);
    const atOnce: number[] = [];
    const single: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      for (const [i, q] of widgetSql.entries()) alone[i].push(await timed(() => pool.query(q)));
      atOnce.push(await timed(() => Promise.all(widgetSql.map((q) => pool.query(q)))));
      single.push(await timed(() => pool.query(oneScan)));
    }
    const slowestRaw = Math.max(...alone.map(p50));
    const ratio = (n: number) => `${(n / slowestRaw).toFixed(2)}x the slowest raw query`;
    console.log(`  raw pg, the same SQL by hand (what a user would run instead):`);
    console.log(`    each widget's query alone, slowest: ${ms(slowestRaw)} (the widget call: ${ms(slowestWidget)})`);
    console.log(`    the eight queries at once on eight connections: ${ms(p50(atOnce))} = ${ratio(p50(atOnce))}`);
    console.log(
      `    one statement answering all eight in a single scan: ${ms(p50(single))} = ${ratio(p50(single))} (the least work at the source)`,
    );
  } finally {
    await pool.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
