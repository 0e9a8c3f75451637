/**
 * Throughput under load, in one run: 100 concurrent keep-alive clients (autocannon) against
 *   - miss:     POST /api/widget/{id}/data with the widget's whole configuration in the body and a new selector filter
 *               value on every request (autocannon's setupRequest), so no cached answer serves it,
 *   - hit:      the same whole body on every request (the result cache answers),
 *   - settings: GET /api/settings, a route that reads nothing of the data path (the ceiling of the HTTP stack),
 *   - bare:     what a user would run instead of the platform for the miss: a bare fastify route in its own node
 *               process (same flags; scripts/bench/bare-data-server.mjs) taking the same body and sending the same
 *               SQL with its value through a pg pool of the connector's size: no authentication, access checks,
 *               compiling or cache,
 *   - bare_ro:  the bare route sending its SQL as the PostgreSQL connector sends a bounded read of a text it cannot
 *               vouch for (a dataset with SQL objects): BEGIN READ ONLY with the statement timeout, the SELECT,
 *               ROLLBACK as three statements pipelined in one write (what that costs; the compiler's own text goes as
 *               one simple-protocol text instead: adapters/sources/postgresql/inline-params.ts),
 *   - pgbench:  the same SQL shape sent straight to PostgreSQL by /usr/bin/pgbench, 10 clients (extended protocol, as
 *               the pg driver sends it), a new filter value per transaction,
 * each with req/s, p50, p99, errors and the server's CPU time per request (/proc/<pid>/stat, user + system: a figure
 * a busy shared machine disturbs far less than req/s); and the server's RSS idle before the load, right after it and 30 s after.
 * The source is a 12-row table, so the database is not what limits.
 *
 * The server is the built one started as `npm start` starts it (node with the start command's flags on
 * scripts/start.mjs, after building here first when the sources changed; logging at info to a discarded stdout), on
 * a throwaway metadata database (DATABASE_URL) and data folder; the source, dataset and widget are made over REST
 * (the source row straight into the metadata database, as the other benchmarks do) and the SQL for pgbench is compiled
 * here from the saved model.
 * autocannon runs in this process. Both share the machine's cores, as a client and server on one host do.
 *
 *   npm run bench:load
 *     DURATION=10    seconds per mode (default 30), split over the rounds
 *     ROUNDS=3       the modes alternate in this many rounds (default 3); req/s and CPU are over all rounds, p50 the
 *                    median of the rounds' and p99 the worst round's (the misses' goal line shows each round's)
 *     CONNECTIONS=10 concurrent clients of the HTTP modes (default 100)
 *     ONLY=hit       one mode (miss, hit, settings, bare, bare_ro, pgbench), or several: ONLY=hit,settings
 *     SETTLE=30      seconds to wait before the last RSS figure
 *     PROFILE=1      the server writes a CPU profile (--cpu-prof) to PROFILE_DIR (default /tmp/bench-load-prof)
 *     SERVER_NODE_FLAGS  node flags for the server instead of the start command's
 *     SOURCE_PG_URL  the source PostgreSQL (default postgres://postgres@127.0.0.1:5432/test)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { connectDatabase } from '../../db/client';
import { freePort } from '../../db/embedded';
import { loadDatasetModel } from '../../server/datasets/load-model';
import { compileWidgetQuery } from '../../server/query/compile/compile-widget';
import { DatasetSources } from '../../server/query/run/targets';
import { DEFAULT_POOL_SIZE } from '../../adapters/sources/types';
import { call, ensureTable, pgSourceRow, tableDataset, throwawayDatabase, SALES_FIELDS } from './support';

const SOURCE_URL = process.env.SOURCE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = 'bench_load_12';
const DURATION = Number(process.env.DURATION ?? 30);
const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 3));
const SETTLE = Number(process.env.SETTLE ?? 30);
const CONNECTIONS = Math.max(1, Math.floor(Number(process.env.CONNECTIONS ?? 100)));
const PG_CLIENTS = 10;
/** The issue's goal for misses, req/s. */
const MISS_GOAL_RPS = 2_500;
/**
 * GET /api/settings req/s on the machine where the issue set MISS_GOAL_RPS: the same load there. The share of it is
 * the goal on a machine of another speed (both share one HTTP stack and one machine).
 */
const ISSUE_SETTINGS_RPS = 9_770;
const MODES = ['miss', 'hit', 'settings', 'bare', 'bare_ro', 'pgbench'] as const;
type Mode = (typeof MODES)[number];

/** The server under test and what the load needs of it. */
interface Ready {
  child: ChildProcess;
  base: string;
  token: string;
  widgetId: number;
  /** The SQL a request compiles to, its parameters, and which of them is the selector's value. */
  sql: string;
  params: unknown[];
  valueIndex: number;
  /** Drops the metadata database and the data folder (after the server stopped). */
  cleanUp(): Promise<void>;
}

const root = path.resolve(import.meta.dirname, '../..');
const ADMIN_PASSWORD = 'Bench-load-2026';

/**
 * The node flags of package.json's start command (`exec node <flags> scripts/start.mjs`), or SERVER_NODE_FLAGS
 * when set (to compare flags).
 */
function startFlags(): string[] {
  if (process.env.SERVER_NODE_FLAGS !== undefined) return process.env.SERVER_NODE_FLAGS.split(/\s+/).filter(Boolean);
  const start = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const m = /exec node (.*?)\s*scripts\/start\.mjs/.exec(start);
  if (!m) throw new Error(`package.json start: no 'exec node ... scripts/start.mjs' in ${start}`);
  return m[1].split(/\s+/).filter(Boolean);
}

const SENTINEL = 0.123456789;

/** The body a dashboard sends for the widget: its whole configuration, the selector's value as a filter. */
function body(value: number) {
  return {
    type: 'table',
    rows: [
      { id: 'id', sql: '[sales.id]' },
      { id: 'amount', sql: '[sales.amount]' },
    ],
    series: [],
    columns: [],
    sorts: [],
    calculated_fields: [],
    filters: [{ sql: '[sales.amount]', op: 'gte', values: [value], value_type: 'float' }],
    page: 1,
    page_size: 100,
  };
}

async function server(profile: string[]): Promise<Ready> {
  await ensureTable(
    SOURCE_URL,
    TABLE,
    12,
    `SELECT g AS id, (g % 3) AS grp, g * 10.5 AS amount, (g % 5) + 1 AS qty, DATE '2024-01-01' + g AS sold_on
       FROM generate_series(1, 12) AS g`,
    { primaryKey: true },
  );
  await promisify(execFile)(process.execPath, [path.join(root, 'scripts/build.mjs'), '--if-stale'], { cwd: root });
  const meta = await throwawayDatabase(SOURCE_URL, 'bench_load_meta');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-load-'));
  const cleanUp = async () => {
    await meta.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(), ...profile, path.join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: meta.url,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'info',
      DRAIN_DELAY_MS: '0',
    },
    // The server logs at info as in production; its lines go nowhere.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  const base = new URL(origin);
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    if (Date.now() - t0 > 120_000) throw new Error('server not ready after 120 s');
    const ok = await fetch(new URL('/api/auth/sso/providers', base)).then(
      async (r) => (await r.arrayBuffer(), r.status === 200),
      () => false,
    );
    if (ok) break;
    await sleep(50);
  }
  const { token } = await call(base, 'POST', '/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
  const me = await call(base, 'GET', '/api/users/me', undefined, token);
  const database = connectDatabase(meta.url, { max: 2 });
  try {
    const bench = { deps: { db: database.db }, base, token, workspaceId: me.personal_workspace_id as number };
    const source = await pgSourceRow(bench, SOURCE_URL);
    const dataset = await tableDataset(bench, {
      name: 'load',
      sourceId: source.id,
      object: 'sales',
      table: TABLE,
      fields: SALES_FIELDS,
    });
    const { filters: _f, page: _p, page_size: _ps, ...saved } = body(0);
    const widget = await call(base, 'POST', '/api/widget', { name: 'load', dataset_id: dataset.id, ...saved }, token);

    const model = await loadDatasetModel(database.db, dataset.id);
    const sources = await DatasetSources.load(database.db, model);
    const b = body(SENTINEL);
    const compiled = compileWidgetQuery(
      model,
      {
        type: b.type,
        rows: b.rows,
        series: [],
        columns: [],
        filters: b.filters.map((filter, i) => ({ path: `filters[${i}]`, filter })),
        sorts: [],
        calculatedFields: [],
        parameters: {},
        page: 1,
        pageSize: b.page_size,
      },
      sources.dialectOf,
    );
    return {
      child,
      base: origin,
      token,
      widgetId: widget.id as number,
      sql: compiled.sql,
      params: compiled.params,
      valueIndex: compiled.params.findIndex((p) => Number(p) === SENTINEL),
      cleanUp,
    };
  } catch (e) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await cleanUp();
    throw e;
  } finally {
    await database.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server process's VmRSS in MB. */
function rss(child: ChildProcess): number {
  const line = readFileSync(`/proc/${child.pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

/** The server process's CPU time so far in ms: user and system (the kernel's share: sockets, mostly). */
function cpuMs(child: ChildProcess): { user: number; system: number } {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** CPU per request in microseconds since `from`, user + system and the system part. */
function cpuPerRequest(child: ChildProcess, from: { user: number; system: number }, requests: number) {
  const now = cpuMs(child);
  const us = (ms: number) => (ms * 1000) / requests;
  return { cpuUs: us(now.user - from.user + now.system - from.system), systemUs: us(now.system - from.system) };
}

interface Figures {
  /** The server's CPU time per request, in microseconds (HTTP modes), and its system (kernel) part. */
  cpuUs?: number;
  systemUs?: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

/** One mode's rounds as one figure: req/s and CPU per request over all of them, the median p50 and the worst p99. */
function combine(rounds: (Figures & { rssAfter?: number })[]): Figures & { rssAfter?: number } {
  const requests = rounds.reduce((n, f) => n + f.requests, 0);
  const weighted = (pick: (f: Figures) => number | undefined) =>
    rounds.every((f) => pick(f) !== undefined)
      ? rounds.reduce((n, f) => n + pick(f)! * f.requests, 0) / Math.max(1, requests)
      : undefined;
  const p50s = rounds.map((f) => f.p50).sort((a, b) => a - b);
  return {
    rps: rounds.reduce((n, f) => n + f.rps, 0) / rounds.length,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...rounds.map((f) => f.p99)),
    errors: rounds.reduce((n, f) => n + f.errors, 0),
    requests,
    cpuUs: weighted((f) => f.cpuUs),
    systemUs: weighted((f) => f.systemUs),
    rssAfter: rounds[rounds.length - 1].rssAfter,
  };
}

async function http(
  ready: Ready,
  mode: 'miss' | 'hit' | 'settings' | 'bare' | 'bare_ro',
  seconds: number,
  base = ready.base,
): Promise<Figures> {
  const headers = { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json' };
  const dataPath = mode === 'bare' || mode === 'bare_ro' ? '/data' : `/api/widget/${ready.widgetId}/data`;
  // A new value per request: a step far below the table's smallest amount, so every row passes and no two are equal.
  let counter = 0;
  const request =
    mode === 'settings'
      ? { method: 'GET' as const, path: '/api/settings' }
      : mode === 'hit'
        ? { method: 'POST' as const, path: dataPath, body: JSON.stringify(body(1.5)) }
        : {
            method: 'POST' as const,
            path: dataPath,
            setupRequest: (req: any) => ({ ...req, body: JSON.stringify(body(++counter / 1e7)) }),
          };
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    requests: [request],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    requests: result.requests.total,
  };
}

/** The size of one answer of each HTTP mode (body and headers as sent), so the modes' write costs can be compared. */
async function responseSizes(ready: Ready): Promise<string> {
  const headers = { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json' };
  const size = async (method: string, p: string, b?: unknown) => {
    const r = await fetch(new URL(p, ready.base), {
      method,
      headers,
      body: b === undefined ? undefined : JSON.stringify(b),
    });
    const text = await r.text();
    let head = 0;
    r.headers.forEach((v, k) => (head += k.length + v.length + 4));
    return `${text.length} + ${head} of headers`;
  };
  return (
    `widget data ${await size('POST', `/api/widget/${ready.widgetId}/data`, body(1.5))}, ` +
    `GET /api/settings ${await size('GET', '/api/settings')}`
  );
}

/** The bare route's process, started with the server's node flags, until it prints "ready". */
async function bareServer(ready: Ready, readOnly: boolean): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(), path.join(root, 'scripts/bench/bare-data-server.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      SOURCE_PG_URL: SOURCE_URL,
      SQL: ready.sql,
      PARAMS: JSON.stringify(ready.params),
      VALUE_INDEX: String(ready.valueIndex),
      POOL_SIZE: String(DEFAULT_POOL_SIZE),
      READ_ONLY: readOnly ? '1' : '',
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`bare route exited (${code})`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

/**
 * The bare route under the miss's load: its figures, with its own process's CPU per request. `bare_ro` sends the SQL
 * as three statements, as the PostgreSQL connector sends a bounded read of a text it cannot vouch for.
 */
async function bare(ready: Ready, mode: 'bare' | 'bare_ro', seconds: number): Promise<Figures> {
  const { child, base } = await bareServer(ready, mode === 'bare_ro');
  try {
    await http(ready, mode, 3, base); // the same warm-up as the server's data path
    const cpu0 = cpuMs(child);
    const f = await http(ready, mode, seconds, base);
    return { ...f, ...cpuPerRequest(child, cpu0, f.requests) };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

async function pgbench(ready: Ready, seconds: number): Promise<Figures> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-load-pgbench-'));
  try {
    // The compiled statement with pgbench variables for its parameters; the selector's value changes per transaction.
    const sql = ready.sql.replace(/\$(\d+)/g, (_m, n: string) => `:p${n}`);
    const sets = ready.params.map((p, i) =>
      i === ready.valueIndex ? `\\set p${i + 1} random(1, 10000000) / 10000000.0` : `\\set p${i + 1} ${String(p)}`,
    );
    const script = path.join(dir, 'query.sql');
    await fs.writeFile(script, `${sets.join('\n')}\n${sql};\n`);
    const u = new URL(SOURCE_URL);
    const args = ['-n', '-M', 'extended', '-c', String(PG_CLIENTS), '-j', '2', '-T', String(seconds)];
    args.push('-l', '--log-prefix', path.join(dir, 'log'), '-f', script);
    args.push('-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username), u.pathname.slice(1));
    const { stdout } = await promisify(execFile)('/usr/bin/pgbench', args, { maxBuffer: 16 * 1024 * 1024 });
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1]);
    const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
    const latencies: number[] = [];
    for (const f of await fs.readdir(dir)) {
      if (!f.startsWith('log')) continue;
      for (const line of (await fs.readFile(path.join(dir, f), 'utf8')).split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return { rps: tps, p50: at(0.5), p99: at(0.99), errors: failed, requests: latencies.length };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function driver() {
  // One mode or several, comma-separated (ONLY=hit,settings: the ratio of the two in one run).
  const only = process.env.ONLY?.split(',') as Mode[] | undefined;
  if (only?.some((m) => !MODES.includes(m))) throw new Error(`ONLY: one or more of ${MODES.join(', ')}`);
  const modes = only ?? MODES;
  const profileDir = process.env.PROFILE_DIR ?? '/tmp/bench-load-prof';
  const profile = process.env.PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const ready = await server(profile);
  const { child } = ready;
  try {
    console.log(
      `node ${process.version}, ${os.cpus().length} cores; server: the build, started as npm start does (node ${startFlags().join(' ')} scripts/start.mjs), pid ${child.pid}`,
    );
    console.log(
      `${CONNECTIONS} connections (pgbench: ${PG_CLIENTS} clients), ${DURATION} s per mode in ${ROUNDS} alternating rounds, ${TABLE}`,
    );
    console.log(`SQL: ${ready.sql}`);
    // A short warm-up of the data path (JIT, prepared statements, pools), then the server idles before the figure.
    await http(ready, 'miss', 3);
    await http(ready, 'hit', 2);
    await sleep(5_000);
    const idle = rss(child);
    console.log(`response bytes: ${await responseSizes(ready)}`);
    // The modes alternate in ROUNDS rounds (each mode DURATION / ROUNDS seconds per round), so a slow stretch of a
    // shared machine hurts every mode alike instead of the one that happened to run during it.
    const rounds: Partial<Record<Mode, Figures & { rssAfter?: number }>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const figures: Partial<Record<Mode, Figures & { rssAfter?: number }>> = {};
      for (const mode of modes) {
        const cpu0 = cpuMs(child);
        const seconds = DURATION / ROUNDS;
        figures[mode] =
          mode === 'pgbench'
            ? await pgbench(ready, seconds)
            : mode === 'bare' || mode === 'bare_ro'
              ? await bare(ready, mode, seconds)
              : await http(ready, mode, seconds);
        if (mode !== 'pgbench' && mode !== 'bare' && mode !== 'bare_ro') {
          figures[mode].rssAfter = rss(child);
          Object.assign(figures[mode], cpuPerRequest(child, cpu0, figures[mode].requests));
        }
      }
      rounds.push(figures);
    }
    const out: Partial<Record<Mode, Figures & { rssAfter?: number }>> = {};
    for (const mode of modes) out[mode] = combine(rounds.map((r) => r[mode]!));
    const after = rss(child);
    console.log(
      `\n${'mode'.padEnd(10)}${'req/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'server CPU/req'.padStart(16)}`,
    );
    for (const mode of modes) {
      const f = out[mode]!;
      console.log(
        `${mode.padEnd(10)}${f.rps.toFixed(0).padStart(10)}${f.p50.toFixed(2).padStart(9)}${f.p99.toFixed(2).padStart(9)}` +
          (f.cpuUs === undefined
            ? ' '.repeat(16)
            : `${f.cpuUs.toFixed(0)} us`.padStart(16) + ` (system ${f.systemUs!.toFixed(0)} us)`) +
          `   errors ${f.errors} of ${f.requests}` +
          (f.rssAfter === undefined ? '' : `   server RSS after ${f.rssAfter.toFixed(0)} MB`),
      );
    }
    console.log(`\nserver RSS: idle before ${idle.toFixed(0)} MB, right after the load ${after.toFixed(0)} MB`);
    await sleep(SETTLE * 1000);
    const settled = rss(child);
    const back = settled - idle;
    console.log(
      `server RSS ${SETTLE} s after the load: ${settled.toFixed(0)} MB (${back >= 0 ? '+' : ''}${back.toFixed(0)} MB over idle; goal <= +20 MB: ${back <= 20 ? 'met' : 'NOT met'})`,
    );
    console.log('\ngoals:');
    const { miss, hit, settings } = out;
    if (miss) {
      // The goal takes the worst round's p99; each round beside it shows whether one slow round (the machine, not
      // the build) decided it.
      const perRound = rounds.map((r) => `${r.miss!.rps.toFixed(0)} req/s p99 ${r.miss!.p99} ms`).join(', ');
      console.log(
        `  misses ${miss.rps.toFixed(0)} req/s (>= ${MISS_GOAL_RPS.toLocaleString('en')}: ${miss.rps >= MISS_GOAL_RPS ? 'met' : 'NOT met'}), p99 ${miss.p99} ms (< 100: ${miss.p99 < 100 ? 'met' : 'NOT met'}; by round: ${perRound})`,
      );
    }
    if (miss && settings)
      console.log(
        `  (misses ${((100 * miss.rps) / settings.rps).toFixed(1)} % of GET /api/settings' ${settings.rps.toFixed(0)} req/s; the goal on ` +
          `the machine that set it, where GET /api/settings did ${ISSUE_SETTINGS_RPS.toLocaleString('en')}: ` +
          `${((100 * MISS_GOAL_RPS) / ISSUE_SETTINGS_RPS).toFixed(1)} %)`,
      );
    if (miss)
      console.log(
        `  (${CONNECTIONS} clients each waiting for its answer: mean latency = ${CONNECTIONS} / req/s = ` +
          `${((1000 * CONNECTIONS) / miss.rps).toFixed(0)} ms, so p99 < 100 ms needs well over ${(10 * CONNECTIONS).toLocaleString('en')} req/s)`,
      );
    if (miss && out.bare)
      console.log(
        `  (misses ${((100 * miss.rps) / out.bare.rps).toFixed(0)} % of the bare fastify + pg route's ${out.bare.rps.toFixed(0)} req/s, ` +
          `${(miss.cpuUs! / out.bare.cpuUs!).toFixed(1)}x its CPU per request)`,
      );
    if (out.bare && out.bare_ro)
      console.log(
        `  (the read-only transaction around the SQL: bare route ${out.bare.cpuUs!.toFixed(0)} -> ${out.bare_ro.cpuUs!.toFixed(0)} us ` +
          `of CPU per request, ${out.bare.rps.toFixed(0)} -> ${out.bare_ro.rps.toFixed(0)} req/s)`,
      );
    if (hit && settings) {
      const perRound = rounds.map((r) => `${((100 * r.hit!.rps) / r.settings!.rps).toFixed(0)} %`).join(', ');
      console.log(
        `  hits ${((100 * hit.rps) / settings.rps).toFixed(0)} % of GET /api/settings (>= 80 %: ${hit.rps >= 0.8 * settings.rps ? 'met' : 'NOT met'}; by round: ${perRound})`,
      );
    }
    if (hit) console.log(`  hits p99 ${hit.p99} ms (< 100: ${hit.p99 < 100 ? 'met' : 'NOT met'})`);
    let errors = 0;
    for (const m of modes) errors += out[m]!.errors;
    console.log(`  errors: ${errors} (0: ${errors === 0 ? 'met' : 'NOT met'})`);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await ready.cleanUp();
    if (profile.length) console.log(`server CPU profile in ${profileDir}`);
  }
}

driver().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
