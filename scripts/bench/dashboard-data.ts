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
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dataSources } from '../../db/schema';
import { buildApp } from '../../server/app/app';
import { loadConfig } from '../../server/app/config';
import { configureQueryEngine } from '../../server/query/run/engine';
import { startRuntime } from '../../server/app/start';
import { call, metadataDatabase } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.ROWS ?? 1_000_000);
const TABLE = `bench_dashboard_${ROWS}`;
const RUNS = Number(process.env.RUNS ?? 7);

async function ensureSourceTable(): Promise<void> {
  const c = new pg.Client({ connectionString: SOURCE_URL });
  await c.connect();
  try {
    const exists = (await c.query('SELECT to_regclass($1) IS NOT NULL AS ok', [`public.${TABLE}`])).rows[0]
      .ok as boolean;
    if (exists) return;
    console.log(`creating ${TABLE} (${ROWS} rows, once)...`);
    await c.query(`CREATE TABLE ${TABLE}_tmp AS
      SELECT g AS id, (g % 1000) AS grp, (g % 7) AS region, ((g::bigint * 7919) % 100000) / 100.0 AS amount,
             (g % 5) + 1 AS qty, DATE '2024-01-01' + (g % 366) AS sold_on
      FROM generate_series(1, ${ROWS}) AS g`);
    await c.query(`ANALYZE ${TABLE}_tmp`);
    await c.query(`ALTER TABLE ${TABLE}_tmp RENAME TO ${TABLE}`);
  } finally {
    await c.end();
  }
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function main() {
  await ensureSourceTable();
  const meta = await metadataDatabase(SOURCE_URL, 'bench_dashboard_meta');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-dashboard-'));
  const password = 'Bench-admin-2026';
  const runtime = await startRuntime(
    loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD: password, DATABASE_URL: meta.url, LOG_LEVEL: 'silent' }),
  );
  const { deps } = runtime;
  configureQueryEngine(deps, { ttlMs: 0 }); // no result cache: every read runs its query
  const app = await buildApp(deps);
  const base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  try {
    const token = (await call(base, 'POST', '/api/auth/login', { username: 'admin', password })).token as string;
    const workspaceId = (await call(base, 'GET', '/api/users/me', undefined, token)).personal_workspace_id as number;
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
          field(-4, 'region', 'integer'),
          field(-5, 'amount', 'float'),
          field(-6, 'qty', 'integer'),
          field(-7, 'sold_on', 'date'),
        ],
        relations: [],
        hierarchies: [],
        filters: [],
        parameters: [],
      },
      token,
    );
    const measures = ['SUM([sales.amount])', 'AVG([sales.qty])', 'COUNT()', 'MAX([sales.amount])'];
    const groups = ['[sales.grp]', '[sales.region]'];
    const widgetIds: number[] = [];
    for (let i = 0; i < 8; i++) {
      const w = await call(
        base,
        'POST',
        '/api/widget',
        {
          name: `w${i}`,
          type: 'table',
          dataset_id: dataset.id,
          rows: [{ id: 'g', sql: groups[i % 2] }],
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
      { items: widgetIds.map((id, i) => ({ widget_id: id, x: i % 4, y: Math.floor(i / 4), w: 1, h: 1 })) },
      token,
    );

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
    await call(base, 'POST', `/api/dashboard/${dashboard.id}/data`, {}, token);
    for (let r = 0; r < RUNS; r++) {
      for (const [i, id] of widgetIds.entries())
        alone[i].push(await timed(() => call(base, 'POST', `/api/widget/${id}/data`, { page_size: 2000 }, token)));
      together.push(await timed(() => call(base, 'POST', `/api/dashboard/${dashboard.id}/data`, {}, token)));
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
