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
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dataSources } from '../../db/schema';
import { buildApp } from '../../server/app/app';
import { loadConfig } from '../../server/app/config';
import { startRuntime } from '../../server/app/start';
import { call, metadataDatabase } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const TABLE = `bench_export_${ROWS}`;

async function ensureSourceTable(): Promise<void> {
  const c = new pg.Client({ connectionString: SOURCE_URL });
  await c.connect();
  try {
    const exists = (await c.query('SELECT to_regclass($1) IS NOT NULL AS ok', [`public.${TABLE}`])).rows[0]
      .ok as boolean;
    if (exists) return;
    console.log(`creating ${TABLE} (${ROWS} rows, once)...`);
    await c.query(`CREATE TABLE ${TABLE}_tmp AS
      SELECT g AS id, (g % 1000) AS grp, ((g::bigint * 7919) % 100000) / 100.0 AS amount,
             DATE '2024-01-01' + (g % 366) AS sold_on, 'товар ' || (g % 50) AS product
      FROM generate_series(1, ${ROWS}) AS g`);
    await c.query(`ALTER TABLE ${TABLE}_tmp ADD PRIMARY KEY (id)`);
    await c.query(`ANALYZE ${TABLE}_tmp`);
    await c.query(`ALTER TABLE ${TABLE}_tmp RENAME TO ${TABLE}`);
  } finally {
    await c.end();
  }
}

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
  await ensureSourceTable();
  const meta = await metadataDatabase(SOURCE_URL, 'bench_export_meta');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-export-'));
  const password = 'Bench-admin-2026';
  const runtime = await startRuntime(
    loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD: password, DATABASE_URL: meta.url, LOG_LEVEL: 'silent' }),
  );
  const { deps } = runtime;
  const app = await buildApp(deps);
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  process.env.RENDER_ORIGIN = origin;
  const base = new URL(origin);
  try {
    const token = (await call(base, 'POST', '/api/auth/login', { username: 'admin', password })).token as string;
    const workspaceId = (await call(base, 'GET', '/api/users/me', undefined, token)).personal_workspace_id as number;
    await call(base, 'PUT', '/api/exports/limits', { max_rows: ROWS + 1, timeout_seconds: 3600 }, token);
    const u = new URL(SOURCE_URL);
    const [source] = await deps.db
      .insert(dataSources)
      .values({
        name: 'bench source',
        type: 'postgresql',
        workspaceId,
        settings: {
          host: u.hostname,
          port: Number(u.port || 5432),
          username: decodeURIComponent(u.username),
          db: u.pathname.slice(1),
        },
      })
      .returning();
    const dataset = await call(
      base,
      'POST',
      '/api/dataset',
      { name: 'bench', workspace_id: workspaceId, live: true, data_source_ids: [source.id] },
      token,
    );
    const field = (id: number, name: string, primitive_type: string) => ({
      id,
      object_id: -1,
      name,
      column: name,
      primitive_type,
    });
    await call(
      base,
      'PUT',
      `/api/dataset/${dataset.id}/schema`,
      {
        objects: [{ id: -1, data_source_id: source.id, name: 'sales', schema: 'public', table: TABLE }],
        fields: [
          field(-2, 'id', 'integer'),
          field(-3, 'grp', 'integer'),
          field(-4, 'amount', 'float'),
          field(-5, 'sold_on', 'date'),
          field(-6, 'product', 'string'),
        ],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      token,
    );
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
    const widgetIds: number[] = [];
    for (let i = 0; i < 8; i++) {
      const w = await call(
        base,
        'POST',
        '/api/widget',
        {
          name: `Виджет ${i + 1}`,
          type: i % 2 ? 'bar' : 'line',
          dataset_id: dataset.id,
          rows: [{ id: 'g', sql: '[sales.product]' }],
          columns: [{ id: 'm', sql: measures[i % 4] }],
        },
        token,
      );
      widgetIds.push(w.id as number);
    }
    const dashboard = await call(base, 'POST', '/api/dashboard', { name: 'bench', workspace_id: workspaceId }, token);
    await call(
      base,
      'PUT',
      `/api/dashboard/${dashboard.id}/schema`,
      { items: widgetIds.map((id, i) => ({ widget_id: id, x: i % 2, y: Math.floor(i / 2), w: 1, h: 1 })) },
      token,
    );
    const pdf = await timedExport(base, token, { object_type: 'dashboard', object_id: dashboard.id, format: 'pdf' });
    console.log(`  pdf of an 8-widget dashboard: ${pdf.seconds.toFixed(1)} s (${mb(pdf.job.size)})`);
  } finally {
    await app.close();
    await runtime.close();
    await meta.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
    await deps.connectors.closeAll();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
