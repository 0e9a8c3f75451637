import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { dataSources } from '../../db/schema/data-sources';
import { buildApp, type BuildAppOptions } from '../../server/app/app';
import { loadConfig } from '../../server/app/config';
import type { AppDeps } from '../../server/app/deps';
import { startRuntime } from '../../server/app/start';
import { configureQueryEngine } from '../../server/query/run/engine';

/*
 * What every benchmark needs around the platform: a throwaway metadata database, the runtime and app on it with the
 * admin logged in, a PostgreSQL source row and a one-table dataset over it, and a JSON call of the REST API.
 * What a benchmark measures, and the columns of its source table, stay in the benchmark.
 */

const ADMIN_PASSWORD = 'Bench-admin-2026';

interface MetadataDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new database `<prefix>_<random>` on the server, dropped by drop(). */
export async function throwawayDatabase(serverUrl: string, prefix: string): Promise<MetadataDatabase> {
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

interface PlatformOptions {
  /** Names the metadata database `bench_<name>_meta_<random>` and the data folder `bench-<name>-<random>`. */
  name: string;
  /** The PostgreSQL server the throwaway metadata database is created on. */
  server: string;
  /**
   * By default DATABASE_URL, when set, is the metadata store instead. The benchmarks that never took it (bench:mailing,
   * and bench:deploy, which reads DATABASE_URL as the server) keep a database of their own.
   */
  alwaysThrowaway?: boolean;
  /** Settings besides the data folder, the admin password, the metadata database and a silent log. */
  config?: Record<string, string>;
  /** Query engine options, set before the app is built. */
  engine?: Parameters<typeof configureQueryEngine>[1];
  /** The app's options (silent, logger off, unless told: `{ logger: { level: 'info' } }` logs as `npm start`). */
  app?: BuildAppOptions;
}

interface Platform {
  deps: AppDeps;
  app: FastifyInstance;
  dataDir: string;
  password: string;
  /** Closes the app and the runtime, drops the metadata database and removes the data folder. */
  close(): Promise<void>;
}

/** The runtime on its metadata database (see alwaysThrowaway) and the app built on it, not listening yet. */
export async function startPlatform(o: PlatformOptions): Promise<Platform> {
  const meta =
    process.env.DATABASE_URL && !o.alwaysThrowaway
      ? { url: process.env.DATABASE_URL, drop: async () => {} }
      : await throwawayDatabase(o.server, `bench_${o.name}_meta`);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `bench-${o.name}-`));
  const dropAll = async () => {
    await meta.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  const runtime = await startRuntime(
    loadConfig({ DATA_DIR: dataDir, ADMIN_PASSWORD, DATABASE_URL: meta.url, LOG_LEVEL: 'silent', ...o.config }),
  ).catch(async (e: unknown) => {
    await dropAll();
    throw e;
  });
  const { deps } = runtime;
  if (o.engine) configureQueryEngine(deps, o.engine);
  const app = await buildApp(deps, o.app);
  return {
    deps,
    app,
    dataDir,
    password: ADMIN_PASSWORD,
    async close() {
      await app.close();
      await runtime.close();
      await dropAll();
      await deps.connectors.closeAll();
    },
  };
}

export interface BenchPlatform extends Platform {
  /** What app.listen answered, e.g. http://127.0.0.1:40123 (no trailing slash). */
  origin: string;
  base: URL;
  /** The admin's session token. */
  token: string;
  userId: number;
  /** The admin's personal workspace. */
  workspaceId: number;
}

/** startPlatform, listening on a free loopback port, with the admin logged in. */
export async function benchPlatform(o: PlatformOptions & { backlog?: number }): Promise<BenchPlatform> {
  const platform = await startPlatform(o);
  try {
    const origin = await platform.app.listen({
      port: 0,
      host: '127.0.0.1',
      ...(o.backlog === undefined ? {} : { backlog: o.backlog }),
    });
    const base = new URL(origin);
    const { token } = await call(base, 'POST', '/api/auth/login', { username: 'admin', password: platform.password });
    const me = await call(base, 'GET', '/api/users/me', undefined, token);
    return { ...platform, origin, base, token, userId: me.id, workspaceId: me.personal_workspace_id };
  } catch (e) {
    await platform.close();
    throw e;
  }
}

/** A PostgreSQL source row for the URL (user, no password) in the admin's workspace, written into the store directly. */
export async function pgSourceRow(bench: { deps: Pick<AppDeps, 'db'>; workspaceId: number }, sourceUrl: string) {
  const u = new URL(sourceUrl);
  const [source] = await bench.deps.db
    .insert(dataSources)
    .values({
      name: 'bench source',
      type: 'postgresql',
      workspaceId: bench.workspaceId,
      settings: {
        host: u.hostname,
        port: Number(u.port || 5432),
        username: decodeURIComponent(u.username),
        db: u.pathname.slice(1),
      },
    })
    .returning();
  return source;
}

/** The columns of the generated sales tables (id, grp, amount, qty, sold_on) as tableDataset takes them. */
export const SALES_FIELDS: [string, string][] = [
  ['id', 'integer'],
  ['grp', 'integer'],
  ['amount', 'float'],
  ['qty', 'integer'],
  ['sold_on', 'date'],
];

/**
 * A dataset (live unless told) over one table of public in the source, one field per column named as the column:
 * answers its id and the fields as saved.
 */
export async function tableDataset(
  bench: Pick<BenchPlatform, 'base' | 'token' | 'workspaceId'>,
  o: {
    name: string;
    sourceId: number;
    /** The object's name, as formulas say it: [object.field]. */
    object: string;
    table: string;
    /** Column name and primitive type, in order. */
    fields: readonly (readonly [string, string])[];
    live?: boolean;
  },
): Promise<{ id: number; fields: { id: number; name: string }[] }> {
  const { base, token } = bench;
  const { id } = await call(
    base,
    'POST',
    '/api/dataset',
    { name: o.name, workspace_id: bench.workspaceId, live: o.live ?? true, data_source_ids: [o.sourceId] },
    token,
  );
  const saved = await call(
    base,
    'PUT',
    `/api/dataset/${id}/schema`,
    {
      objects: [{ id: -1, data_source_id: o.sourceId, name: o.object, schema: 'public', table: o.table }],
      fields: o.fields.map(([name, primitive_type], i) => ({
        id: -2 - i,
        object_id: -1,
        name,
        column: name,
        primitive_type,
      })),
      relations: [],
      hierarchies: [],
      filters: [],
      parameters: [],
    },
    token,
  );
  return { id, fields: saved.fields };
}

/** Widgets made one after another from their POST /api/widget bodies: answers their ids in the same order. */
export async function createWidgets(bench: Pick<BenchPlatform, 'base' | 'token'>, bodies: object[]): Promise<number[]> {
  const ids: number[] = [];
  for (const body of bodies) ids.push((await call(bench.base, 'POST', '/api/widget', body, bench.token)).id as number);
  return ids;
}

/** A dashboard named bench in the admin's workspace showing the widgets, each where `place` puts it: answers its id. */
export async function dashboardOf(
  bench: Pick<BenchPlatform, 'base' | 'token' | 'workspaceId'>,
  widgetIds: number[],
  place: (i: number) => { x: number; y: number; w: number; h: number },
): Promise<number> {
  const { base, token } = bench;
  const { id } = await call(base, 'POST', '/api/dashboard', { name: 'bench', workspace_id: bench.workspaceId }, token);
  const items = widgetIds.map((widget_id, i) => ({ widget_id, ...place(i) }));
  await call(base, 'PUT', `/api/dashboard/${id}/schema`, { items }, token);
  return id as number;
}

/**
 * The source table made once from `select` (over generate_series(1, rows) AS g) and reused by later runs. It is
 * filled under another name and renamed at the end, so a run stopped halfway leaves no half-filled table to reuse.
 */
export async function ensureTable(
  sourceUrl: string,
  table: string,
  rows: number,
  select: string,
  o: { primaryKey?: boolean; sayTime?: boolean } = {},
): Promise<void> {
  const c = new pg.Client({ connectionString: sourceUrl });
  await c.connect();
  try {
    const exists = (await c.query('SELECT to_regclass($1) IS NOT NULL AS ok', [`public.${table}`])).rows[0]
      .ok as boolean;
    if (exists) return;
    console.log(`creating ${table} (${rows} rows, once)...`);
    const started = Date.now();
    await c.query(`CREATE TABLE ${table}_tmp AS ${select}`);
    if (o.primaryKey) await c.query(`ALTER TABLE ${table}_tmp ADD PRIMARY KEY (id)`);
    await c.query(`ANALYZE ${table}_tmp`);
    await c.query(`ALTER TABLE ${table}_tmp RENAME TO ${table}`);
    if (o.sayTime) console.log(`created in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await c.end();
  }
}

/** A REST call answering the envelope's data; anything but 200 throws with the answer. */
export async function call(base: URL, method: string, pathname: string, body: unknown, token?: string) {
  const r = await fetch(new URL(pathname, base), {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await r.json()) as { data?: any };
  if (r.status !== 200) throw new Error(`${method} ${pathname}: ${r.status} ${JSON.stringify(json)}`);
  return json.data;
}
