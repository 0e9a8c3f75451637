/**
 * Extract throughput and what it buys: a 10M-row PostgreSQL table synchronised into a materialised dataset's DuckDB
 * extract through the REST API (POST /api/datasets/{id}/extracts, polled at GET /api/etl-jobs/{jobId}), then the same
 * aggregation widget on the live dataset and on the extract. Figures:
 *   - rows/s of the run (rows_loaded / (finished_at - started_at)) and the process's peak RSS while it pulled
 *     (sampled every 50 ms; the pull runs in this process, DuckDB included) against the RSS before it,
 *   - the COPY-out limit: the same SELECT copied out by psql (`\copy ... TO '/dev/null'`, what a user would run
 *     instead) just before and just after the run, and the run's rows/s as a share of it (a ratio from one run,
 *     so a busy machine slows both sides alike),
 *   - the widget p50 live / p50 on the extract (result cache off, requests alternated one by one).
 *
 *   npm run bench:extract     (SOURCE_PG_URL, ROWS, WIDGET_RUNS to change the defaults)
 *
 * The source table lives in the local PostgreSQL (127.0.0.1:5432, database test) and is created once and reused. The
 * metadata store is a throwaway database on the same server (or DATABASE_URL).
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { currentLoadRow, extractKeyOf } from '../../server/etl/loads';
import { benchPlatform, call, ensureTable, pgSourceRow, tableDataset, SALES_FIELDS } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 10_000_000);
const TABLE = `bench_extract_${ROWS}`;
const WIDGET_RUNS = Number(process.env.WIDGET_RUNS ?? 7);

/** Seconds psql takes to copy the table's rows out as CSV into /dev/null: the COPY-out limit of this machine. */
function copyOutSeconds(): number {
  const started = performance.now();
  execFileSync(
    'psql',
    [
      SOURCE_URL,
      '-X',
      '-q',
      '-c',
      `\\copy (SELECT id, grp, amount, qty, sold_on FROM ${TABLE}) TO '/dev/null' WITH (FORMAT csv)`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return (performance.now() - started) / 1000;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function main() {
  await ensureTable(
    SOURCE_URL,
    TABLE,
    ROWS,
    `SELECT g AS id, (g % 1000) AS grp, (((g::bigint * 7919) % 100000) / 100.0)::numeric(10,2) AS amount,
             (g % 5) + 1 AS qty, DATE '2024-01-01' + (g % 366) AS sold_on
      FROM generate_series(1, ${ROWS}) AS g`,
    { sayTime: true },
  );
  const bench = await benchPlatform({
    name: 'extract',
    server: SOURCE_URL,
    engine: { ttlMs: 0, timeoutMs: 600_000 }, // no result cache: every request runs its query
  });
  const { deps, base, token } = bench;
  try {
    const source = await pgSourceRow(bench, SOURCE_URL);
    const createDataset = async (name: string, live: boolean) => {
      const { id } = await tableDataset(bench, {
        name,
        live,
        sourceId: source.id,
        object: 'sales',
        table: TABLE,
        fields: SALES_FIELDS,
      });
      return id;
    };
    const liveId = await createDataset('bench live', true);
    const extractId = await createDataset('bench extract', false);

    // The run, with the process's RSS sampled while it pulls.
    await deps.jobs.start();
    if (global.gc) global.gc();
    const copyBefore = copyOutSeconds();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const started = await call(base, 'POST', `/api/datasets/${extractId}/extracts`, {}, token);
    let run = started;
    while (!['succeeded', 'failed', 'cancelled'].includes(run.state)) {
      await new Promise((r) => setTimeout(r, 200));
      run = await call(base, 'GET', `/api/etl-jobs/${started.job_id}`, undefined, token);
    }
    clearInterval(sampler);
    if (run.state !== 'succeeded') throw new Error(`run ${run.state}: ${run.error}`);
    const seconds = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
    const copyAfter = copyOutSeconds();
    const copyRate = ROWS / ((copyBefore + copyAfter) / 2);
    // The run's load, as the storage module keeps it (file:// here: DATA_DIR/storage).
    const load = await currentLoadRow(deps.db, extractId);
    const file = (await deps.storage.head(extractKeyOf(extractId, load!.id)))!;

    const config = {
      type: 'table',
      rows: [{ id: 'grp', sql: '[sales.grp]' }],
      columns: [
        { id: 'total', sql: 'SUM([sales.amount])' },
        { id: 'n', sql: 'COUNT()' },
        { id: 'q', sql: 'AVG([sales.qty])' },
      ],
      sorts: [{ field_id: 'grp', direction: 'asc' }],
    };
    const widget = async (datasetId: number) =>
      (await call(base, 'POST', '/api/widget', { name: 'w', dataset_id: datasetId, ...config }, token)).id as number;
    const [liveWidget, extractWidget] = [await widget(liveId), await widget(extractId)];
    const timed = async (w: number) => {
      const at = performance.now();
      const data = await call(base, 'POST', `/api/widget/${w}/data`, { page_size: 10_000 }, token);
      if (data.rows.length !== 1000) throw new Error(`widget ${w}: ${data.rows.length} rows`);
      return performance.now() - at;
    };
    await timed(liveWidget);
    await timed(extractWidget);
    const liveMs: number[] = [];
    const extractMs: number[] = [];
    for (let i = 0; i < WIDGET_RUNS; i++) {
      liveMs.push(await timed(liveWidget));
      extractMs.push(await timed(extractWidget));
    }

    console.log(`\nextract of ${run.rows_loaded} rows (${TABLE}, 5 columns) from PostgreSQL:`);
    console.log(`  ${seconds.toFixed(1)} s, ${Math.round(run.rows_loaded / seconds).toLocaleString('en')} rows/s`);
    console.log(
      `  COPY-out limit (psql \\copy to /dev/null, before ${copyBefore.toFixed(1)} s / after ${copyAfter.toFixed(1)} s): ` +
        `${Math.round(copyRate).toLocaleString('en')} rows/s; the extract runs at ${((run.rows_loaded / seconds / copyRate) * 100).toFixed(0)} % of it`,
    );
    console.log(`  machine load average while measuring: ${os.loadavg()[0].toFixed(1)} (${os.cpus().length} cores)`);
    console.log(`  RSS before ${mb(rssBefore)}, peak while pulling ${mb(peak)} (+${mb(peak - rssBefore)})`);
    console.log(`  extract file ${mb(file.size)}`);
    console.log(`widget (GROUP BY 1000 groups: SUM, COUNT, AVG over ${ROWS} rows), p50 of ${WIDGET_RUNS}:`);
    console.log(`  live ${p50(liveMs).toFixed(1)} ms, extract ${p50(extractMs).toFixed(1)} ms`);
    console.log(`  extract is ${(p50(liveMs) / p50(extractMs)).toFixed(1)}x faster`);
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
