/**
 * File export: a widget of ROWS (1M) rows to CSV and to XLSX (rows/s, peak RSS of the process while streaming), and a
 * PDF of an 8-widget dashboard through headless Chromium (seconds). Each export is a job started with
 * POST /api/exports and polled with GET /api/exports/{jobId}, against the listening app.
 *
 *   npm run bench:export      (SOURCE_PG_URL, ROWS to change the defaults; CHROMIUM_PATH for the PDF)
 *
 * The source table lives in the local PostgreSQL (127.0.0.1:5432, database test) and is created once and reused. The
 * metadata store is a throwaway database on the same server (or DATABASE_URL).
 */
import os from 'node:os';
import { benchPlatform, call, createWidgets, dashboardOf, ensureTable, pgSourceRow, tableDataset } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const TABLE = `bench_export_${ROWS}`;

/** Runs one export job to its end; answers seconds, the peak RSS seen while it ran and the job. */
async function timedExport(base: URL, token: string, body: Record<string, unknown>) {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  try {
    const { job_id } = await call(base, 'POST', '/api/exports', body, token);
    for (;;) {
      const job = await call(base, 'GET', `/api/exports/${job_id}`, undefined, token);
      if (!['queued', 'running'].includes(job.state)) {
        if (job.state !== 'succeeded') throw new Error(`export ${job.state}: ${job.error}`);
        return { seconds: (performance.now() - started) / 1000, baseline, peak, job };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    clearInterval(sampler);
  }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  await ensureTable(
    SOURCE_URL,
    TABLE,
    ROWS,
    `SELECT g AS id, (g % 1000) AS grp, ((g::bigint * 7919) % 100000) / 100.0 AS amount,
             DATE '2024-01-01' + (g % 366) AS sold_on, 'товар ' || (g % 50) AS product
      FROM generate_series(1, ${ROWS}) AS g`,
    { primaryKey: true },
  );
  const bench = await benchPlatform({ name: 'export', server: SOURCE_URL });
  // Chromium renders the dashboard from this listening app.
  process.env.RENDER_ORIGIN = bench.origin;
  const { base, token } = bench;
  try {
    await call(base, 'PUT', '/api/exports/limits', { max_rows: ROWS + 1, timeout_seconds: 3600 }, token);
    const source = await pgSourceRow(bench, SOURCE_URL);
    const dataset = await tableDataset(bench, {
      name: 'bench',
      sourceId: source.id,
      object: 'sales',
      table: TABLE,
      fields: [
        ['id', 'integer'],
        ['grp', 'integer'],
        ['amount', 'float'],
        ['sold_on', 'date'],
        ['product', 'string'],
      ],
    });
    const big = await call(
      base,
      'POST',
      '/api/widget',
      {
        name: 'all rows',
        type: 'table',
        dataset_id: dataset.id,
        rows: ['id', 'grp', 'amount', 'sold_on', 'product'].map((f) => ({ id: f, sql: `[sales.${f}]` })),
        sorts: [{ field_id: 'id', direction: 'asc' }],
      },
      token,
    );
    console.log(`\nnode ${process.version}, ${os.cpus().length} cores; source ${TABLE} (${ROWS} rows)`);
    for (const format of ['csv', 'xlsx']) {
      const r = await timedExport(base, token, { object_type: 'widget', object_id: big.id, format });
      console.log(
        `  ${format}: ${ROWS} rows in ${r.seconds.toFixed(1)} s = ${Math.round(ROWS / r.seconds)} rows/s; ` +
          `file ${mb(r.job.size)}; RSS ${mb(r.baseline)} before, peak ${mb(r.peak)}`,
      );
    }
    const measures = ['SUM([sales.amount])', 'AVG([sales.amount])', 'COUNT()', 'MAX([sales.amount])'];
    const widgetIds = await createWidgets(
      bench,
      Array.from({ length: 8 }, (_, i) => ({
        name: `Виджет ${i + 1}`,
        type: i % 2 ? 'bar' : 'line',
        dataset_id: dataset.id,
        rows: [{ id: 'g', sql: '[sales.product]' }],
        columns: [{ id: 'm', sql: measures[i % 4] }],
      })),
    );
    const dashboardId = await dashboardOf(bench, widgetIds, (i) => ({ x: i % 2, y: Math.floor(i / 2), w: 1, h: 1 }));
    const pdf = await timedExport(base, token, { object_type: 'dashboard', object_id: dashboardId, format: 'pdf' });
    console.log(`  pdf of an 8-widget dashboard: ${pdf.seconds.toFixed(1)} s (${mb(pdf.job.size)})`);
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
