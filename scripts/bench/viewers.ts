/**
 * 200 concurrent viewers of one public share link: each, in a loop for 30 s, loads the dashboard
 * (GET /api/public/link/{token}/dashboard) and then the data of its 8 widgets at once
 * (POST /api/public/link/{token}/widget/{id}/data), as the viewer page does, over keep-alive HTTP to the listening
 * app. The result cache is on (the default): 200 people looking at one dashboard read the same rows. Prints p50, p95
 * and p99 of each request and of a whole page load, requests per second and errors. Goal on a 2-core machine:
 * p95 under 1 s, no errors.
 *
 *   npm run bench:viewers     (VIEWERS, SECONDS, ROWS, SOURCE_PG_URL to change the defaults)
 *
 * The load runs in a worker thread (its own event loop), so that the server's latencies are not the client's. The
 * public paths' per-address rate limit is off: every viewer here comes from 127.0.0.1. The source table is the one
 * bench:dashboard uses (created once, reused); the metadata store is a throwaway database on the same server.
 */
import os from 'node:os';
import { LISTEN_BACKLOG } from '../../server/app/app';
import { dashboardSalesDataset, dashboardSalesTable, ensureDashboardSales, viewerDashboard } from './dashboard-sales';
import { benchPlatform, call } from './support';
import { pct, runLoad } from './viewer-load';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const TABLE = dashboardSalesTable(ROWS);
const VIEWERS = Number(process.env.VIEWERS ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 30);

const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  await ensureDashboardSales(SOURCE_URL, ROWS);
  const bench = await benchPlatform({
    name: 'viewers',
    server: SOURCE_URL,
    config: { PUBLIC_RATE_LIMIT_PER_MINUTE: '0' },
    backlog: LISTEN_BACKLOG,
  });
  const { base, token } = bench;
  try {
    const datasetId = await dashboardSalesDataset(bench, SOURCE_URL, ROWS);
    const { widgetIds, dashboardId } = await viewerDashboard(bench, datasetId);
    const link = await call(base, 'POST', `/api/dashboard/${dashboardId}/share-links`, { name: 'bench' }, token);

    // Warm-up: one viewer, a few seconds (plans, connections, the result cache).
    await runLoad({ base: base.toString(), token: link.token, widgetIds, viewers: 1, seconds: 2 });
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const r = await runLoad({
      base: base.toString(),
      token: link.token,
      widgetIds,
      viewers: VIEWERS,
      seconds: SECONDS,
    });
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const cpu = process.cpuUsage(cpu0);
    const [load1] = os.loadavg();

    const reqP95 = pct(r.requests, 0.95);
    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; source ${TABLE}; result cache on`);
    console.log(
      `  ${VIEWERS} viewers of one share link for ${r.elapsed.toFixed(1)} s, each: dashboard + 8 widget data`,
    );
    console.log(
      `  requests: ${r.requests.length}, ${(r.requests.length / r.elapsed).toFixed(0)} req/s, errors: ${r.errors}`,
    );
    console.log(`  per request: p50 ${ms(pct(r.requests, 0.5))}, p95 ${ms(reqP95)}, p99 ${ms(pct(r.requests, 0.99))}`);
    console.log(
      `  per page load (dashboard, then 8 widgets at once): p50 ${ms(pct(r.pages, 0.5))}, p95 ${ms(pct(r.pages, 0.95))}, p99 ${ms(pct(r.pages, 0.99))}; ${r.pages.length} page loads`,
    );
    console.log(
      `  server event loop busy ${(elu * 100).toFixed(0)} %; process CPU (server + load worker) ${((cpu.user + cpu.system) / 1000 / r.elapsed / 10).toFixed(0)} % of one core; machine load average ${load1.toFixed(1)} on ${os.cpus().length} cores`,
    );
    console.log(`  goal p95 < 1 s and no errors: ${reqP95 < 1000 && r.errors === 0 ? 'met' : 'NOT met'}`);
    if (r.errorSamples.length) console.log(`  error samples:\n    ${r.errorSamples.join('\n    ')}`);
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
