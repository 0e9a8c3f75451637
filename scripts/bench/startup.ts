/**
 * Start-up cost of `npm start` on the embedded defaults: the server is started exactly as `npm start` starts it
 * (package.json's start command, so the build check and the node flags count) on a fresh DATA_DIR, twice: the
 * first run creates the cluster and the administrator, the second is the ordinary restart. Printed:
 *   - ready: from spawn to the first 200 of GET /api/auth/sso/providers, a public operation that reads the
 *     metadata database (second start; the first run for reference). The OpenAPI document is built on its first
 *     request, so that first GET /api/v3/api-docs after ready is printed on its own line;
 *   - the server process's CPU time until ready (user + system), which a busy machine disturbs far less than the
 *     wall-clock figure;
 *   - idle RSS of the node process (VmRSS) after a login and a few requests, once settled;
 *   - the embedded PostgreSQL's memory separately (postmaster and its backends, PSS summed so that shared buffers
 *     count once).
 *
 *   npm run bench:startup        (SETTLE_MS=5000 to change the settling time)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedClusterDir, freePort } from '../../db/embedded';

const root = path.resolve(import.meta.dirname, '../..');
const settleMs = Number(process.env.SETTLE_MS ?? 5000);
const startCommand = (
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start;
const password = 'Bench-startup-2026';

interface Started {
  child: ChildProcess;
  port: number;
  readyMs: number;
  /** The server process's CPU time (user + system) when it was ready: steadier than readyMs on a busy machine. */
  cpuMs: number;
  output: () => string;
}

async function start(dataDir: string): Promise<Started> {
  const port = await freePort();
  const t0 = performance.now();
  // As npm runs it: sh -c '<start>' with node_modules/.bin first on PATH; the command execs node, so this pid is
  // the server's.
  const child = spawn('sh', ['-c', startCommand], {
    cwd: root,
    env: {
      ...process.env,
      PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: password,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${out}`);
    if (performance.now() - t0 > 120_000) throw new Error(`server not ready after 120 s: ${out}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/auth/sso/providers`);
      await res.arrayBuffer();
      if (res.status === 200) {
        const readyMs = performance.now() - t0;
        return { child, port, readyMs, cpuMs: cpuTimeMs(child.pid!), output: () => out };
      }
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(s: Started): Promise<void> {
  const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
  s.child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`server exited with ${code}: ${s.output()}`);
}

/** utime + stime of the process (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

function pss(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Pss:'));
    return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Every process below pid (the postmaster and its backends). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name, which may itself hold spaces or parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) for (const c of parents.get(queue.shift()!) ?? []) (out.push(c), queue.push(c));
  return out;
}

async function exercise(port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  const { data } = (await login.json()) as { data: { token: string } };
  const auth = { authorization: `Bearer ${data.token}` };
  for (let i = 0; i < 5; i++) {
    for (const p of ['/api/v3/api-docs', '/api/settings', '/api/users', '/api/workspaces']) {
      const res = await fetch(`${base}${p}`, { headers: auth });
      await res.arrayBuffer();
    }
  }
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(0);

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-startup-'));
  try {
    const first = await start(dataDir);
    await stop(first);
    const second = await start(dataDir);
    const d0 = performance.now();
    const docs = await fetch(`http://127.0.0.1:${second.port}/api/v3/api-docs`);
    await docs.arrayBuffer();
    const docsMs = performance.now() - d0;
    if (docs.status !== 200) throw new Error(`api-docs: ${docs.status}`);
    await exercise(second.port);
    await new Promise((r) => setTimeout(r, settleMs));
    const pid = second.child.pid!;
    const nodeRss = statusField(pid, 'VmRSS');
    const pg = descendants(pid);
    const pgPss = pg.reduce((sum, p) => sum + pss(p), 0);
    await stop(second);
    console.log(`start command: ${startCommand}`);
    console.log(`first run ready:          ${first.readyMs.toFixed(0)} ms (creates the cluster and the administrator)`);
    console.log(`ready (second start):     ${second.readyMs.toFixed(0)} ms   goal < 1000 ms`);
    console.log(
      `node CPU until ready:     ${second.cpuMs.toFixed(0)} ms (user + system of the server process; the machine's load: ${os.loadavg()[0].toFixed(1)})`,
    );
    console.log(`first api-docs after it:  ${docsMs.toFixed(0)} ms (the OpenAPI document is built on first use)`);
    console.log(`node idle RSS:            ${mb(nodeRss)} MB   goal < 150 MB`);
    console.log(`embedded PostgreSQL:      ${mb(pgPss)} MB PSS over ${pg.length} processes`);
  } finally {
    // Run as root from a folder the postgres user cannot reach, the cluster is kept outside DATA_DIR.
    await fs.rm(await embeddedClusterDir(dataDir), { recursive: true, force: true });
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
