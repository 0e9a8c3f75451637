import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../../../db/embedded';

/** The server as `npm start` runs it, started from a checkout, for the tests of the start contract. */

export const repoRoot = path.resolve(import.meta.dirname, '../../..');

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  output: () => string;
}

/** package.json's start command of the checkout at `cwd`. */
function startCommand(cwd: string): string {
  return (JSON.parse(readFileSync(path.join(cwd, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;
}

/**
 * `sh -c '<start>'` with node_modules/.bin first on PATH, as npm runs it. The command ends in `exec node ...`, so
 * the child's pid is the server's own: SIGTERM and SIGKILL reach it and not a wrapper.
 */
export async function spawnServer(cwd: string, env: Record<string, string | undefined>): Promise<ServerProcess> {
  const port = await freePort();
  const merged: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.join(cwd, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: '',
    // SIGTERM closes at once unless a test drains on purpose (the default waits 3 s for a load balancer).
    DRAIN_DELAY_MS: '0',
    ...env,
  };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  const child = spawn('sh', ['-c', startCommand(cwd)], { cwd, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, port, output: () => out };
}

/** Until GET /api/v3/api-docs answers 200 (the README's readiness signal). */
async function waitReady(server: ServerProcess, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (server.child.exitCode !== null) throw new Error(`server exited (${server.child.exitCode}): ${server.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v3/api-docs`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready: ${server.output()}`);
}

export async function startServer(cwd: string, env: Record<string, string | undefined>): Promise<ServerProcess> {
  const server = await spawnServer(cwd, env);
  await waitReady(server);
  return server;
}

export const exited = (c: ChildProcess) =>
  new Promise<number | null>((r) =>
    c.exitCode !== null || c.signalCode !== null ? r(c.exitCode) : c.once('exit', (code) => r(code)),
  );

export interface LoginBody {
  success: boolean;
  data?: { token: string; token_type: string; expires_in: number };
}

export async function login(port: number, password: string): Promise<{ status: number; body: LoginBody }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return { status: res.status, body: (await res.json()) as LoginBody };
}

/** The pid of the embedded PostgreSQL still running on `dataDir`'s cluster, if any. */
export function runningPostmaster(dataDir: string): number | undefined {
  const f = path.join(dataDir, 'pg', 'postmaster.pid');
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** After a file's tests: kill the servers it started, stop a postmaster they left behind, remove the data. */
export async function stopLeftovers(children: ChildProcess[], dataDir: string): Promise<void> {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (!dataDir) return;
  const pid = runningPostmaster(dataDir);
  if (pid) process.kill(pid, 'SIGINT');
  await rm(dataDir, { recursive: true, force: true });
}
