/**
 * Rollups against live and the extract, in one run: the 8-widget dashboard of bench:viewers (grouped by region, four
 * measures) over a generated PostgreSQL table of 10M rows, POST /api/dashboard/{id}/data answered
 *   - live (the dataset's rollups switched off for the run),
 *   - on the extract (a materialised dataset over the same table, its extract run first),
 *   - on the suggested rollups (POST …/rollups/suggest's proposals created and built, then read),
 * each cold: the result cache is off, so every widget read runs its query. The goals: rollups >= 50x faster than live
 * and >= 5x faster than the extract. Build time and rollup sizes are printed.
 *
 *   npx tsx scripts/bench/rollup.ts      (ROWS=… for another size, RUNS=…, SOURCE_PG_URL=…)
 *
 * The widgets are bench:viewers' (one counts rows with COUNT(), which every rollup answers from its row counts). The
 * table is the one bench:dashboard makes (created once, reused).
 */
import os from 'node:os';
import { dashboardSalesDataset, dashboardSalesTable, ensureDashboardSales } from './dashboard-sales';
import { benchPlatform, call, createWidgets, dashboardOf, pgSourceRow, tableDataset } from './support';
import { setRollupReads } from '../../server/query/rollups/read-rollup';
import { actorOfUser } from '../../server/auth/actor';
import { createRollup, getRollup, startBuild } from '../../server/rollups/rollups';
import { suggestRollups } from '../../server/rollups/suggest';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 10_000_000);
const RUNS = Number(process.env.RUNS ?? 5);

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (n: number) => `${n.toFixed(1)} ms`;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const FIELDS: [string, string][] = [
  ['id', 'integer'],
  ['grp', 'integer'],
  ['region', 'integer'],
  ['amount', 'float'],
  ['qty', 'integer'],
  ['sold_on', 'date'],
];

async function main() {
  let started = performance.now();
  await ensureDashboardSales(SOURCE_URL, ROWS);
  const tableSeconds = (performance.now() - started) / 1000;
  const bench = await benchPlatform({
    name: 'rollup',
    server: SOURCE_URL,
    engine: { ttlMs: 0, timeoutMs: 600_000 }, // no result cache: every read runs its query (cold)
  });
  const { deps, base, token } = bench;
  try {
    await deps.jobs.start();
    const actor = (await actorOfUser(deps, bench.userId))!;
    const liveId = await dashboardSalesDataset(bench, SOURCE_URL, ROWS);
    const source = await pgSourceRow(bench, SOURCE_URL);
    const { id: extractId } = await tableDataset(bench, {
      name: 'bench extract',
      live: false,
      sourceId: source.id,
      object: 'sales',
      table: dashboardSalesTable(ROWS),
      fields: FIELDS,
    });

    // The viewers' dashboard, on each dataset.
    const kinds = ['bar', 'line', 'pie', 'table', 'kpi', 'bar', 'line', 'table'];
    const measures = ['SUM([sales.amount])', 'AVG([sales.qty])', 'COUNT()', 'MAX([sales.amount])'];
    const dashboardOn = async (datasetId: number) => {
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
      return dashboardOf(bench, widgetIds, (i) => ({ x: (i % 4) * 3, y: Math.floor(i / 4) * 4, w: 3, h: 4 }));
    };
    const liveDashboard = await dashboardOn(liveId);
    const extractDashboard = await dashboardOn(extractId);

    // The extract.
    started = performance.now();
    const run = await call(base, 'POST', `/api/datasets/${extractId}/extracts`, {}, token);
    let state = run;
    while (!['succeeded', 'failed', 'cancelled'].includes(state.state)) {
      await sleep(500);
      state = await call(base, 'GET', `/api/etl-jobs/${run.job_id}`, undefined, token);
    }
    if (state.state !== 'succeeded') throw new Error(`extract ${state.state}: ${state.error}`);
    const extractSeconds = (performance.now() - started) / 1000;

    // The suggested rollups of the live dataset, built.
    started = performance.now();
    const { suggestions, not_served } = await suggestRollups(deps, actor, liveId);
    const suggestSeconds = (performance.now() - started) / 1000;
    if (not_served.length) console.log('  widgets no suggestion serves:', not_served);
    const built: { name: string; rows: number | null; seconds: number; bytes?: number }[] = [];
    started = performance.now();
    for (const s of suggestions) {
      const rollup = await createRollup(deps, actor, liveId, {
        name: s.name,
        dimensions: s.dimensions,
        measures: s.measures,
        // A live dataset has no extract runs to follow: a schedule (the bench builds by hand).
        refresh: { mode: 'schedule', cron: '0 3 * * *', timezone: 'UTC' },
      });
      const buildStarted = performance.now();
      const build = await startBuild(deps, actor, liveId, rollup.id);
      let view = await getRollup(deps, actor, liveId, rollup.id);
      while (
        view.last_build?.build_id !== build.build_id ||
        !['succeeded', 'failed', 'cancelled'].includes(view.last_build.state)
      ) {
        await sleep(200);
        view = await getRollup(deps, actor, liveId, rollup.id);
      }
      const last = view.last_build!;
      if (last.state !== 'succeeded') throw new Error(`rollup build ${last.state}: ${last.error}`);
      built.push({
        name: s.name,
        rows: view.rows,
        seconds: (performance.now() - buildStarted) / 1000,
        bytes: view.bytes ?? undefined,
      });
    }
    const buildSeconds = (performance.now() - started) / 1000;

    const dashboard = async (id: number) => {
      const r = await fetch(new URL(`/api/dashboard/${id}/data`, base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: '{}',
      });
      const body = (await r.json()) as { data?: { items?: { error?: unknown }[] } };
      if (r.status !== 200 || body.data?.items?.some((x) => x.error))
        throw new Error(`dashboard ${id}: ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
      return r.headers.get('x-data-path');
    };
    const timed = async (f: () => Promise<string | null>) => {
      const t = performance.now();
      const path = await f();
      return { ms: performance.now() - t, path };
    };
    const paths = {
      live: new Set<string | null>(),
      extract: new Set<string | null>(),
      rollup: new Set<string | null>(),
    };
    const times = { live: [] as number[], extract: [] as number[], rollup: [] as number[] };
    const once = async (which: keyof typeof times) => {
      setRollupReads(deps, which === 'rollup');
      await sleep(300); // the previous path's work settled (a live dashboard keeps both cores busy for seconds)
      const r = await timed(() => dashboard(which === 'extract' ? extractDashboard : liveDashboard));
      times[which].push(r.ms);
      paths[which].add(r.path);
    };
    // Warm connections and the extract's and rollups' files once, then alternate.
    for (const which of ['live', 'extract', 'rollup'] as const) await once(which);
    for (const which of ['live', 'extract', 'rollup'] as const) times[which] = [];
    for (let r = 0; r < RUNS; r++) for (const which of ['rollup', 'extract', 'live'] as const) await once(which);

    // The rollups again, alone: nothing else of this run in flight (other processes on the machine still are).
    const rollupAlone: number[] = [];
    setRollupReads(deps, true);
    for (let r = 0; r < RUNS; r++) {
      await sleep(1000);
      rollupAlone.push((await timed(() => dashboard(liveDashboard))).ms);
    }
    const [live, extract, rollup] = [p50(times.live), p50(times.extract), p50(times.rollup)];
    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; ${ROWS} rows; result cache off; ${RUNS} runs`);
    console.log(`  table ready in ${tableSeconds.toFixed(1)} s; extract run ${extractSeconds.toFixed(1)} s`);
    console.log(
      `  suggest ${suggestSeconds.toFixed(1)} s: ${suggestions.length} rollup(s); built in ${buildSeconds.toFixed(1)} s`,
    );
    for (const b of built)
      console.log(
        `    ${b.name}: ${b.rows} rows${b.bytes ? `, ${(b.bytes / 1024).toFixed(0)} KiB` : ''}, build ${b.seconds.toFixed(1)} s`,
      );
    console.log(
      `  dashboard (8 widgets), p50: live ${ms(live)} [${[...paths.live]}], extract ${ms(extract)} [${[...paths.extract]}], rollups ${ms(rollup)} [${[...paths.rollup]}]`,
    );
    console.log(
      `  rollups ${(live / rollup).toFixed(1)}x faster than live (goal 50x), ${(extract / rollup).toFixed(1)}x faster than the extract (goal 5x)`,
    );
    console.log(
      `  rollups alone, a second apart: p50 ${ms(p50(rollupAlone))}, min ${ms(Math.min(...rollupAlone))}; load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    setRollupReads(deps, true);
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
