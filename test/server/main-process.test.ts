import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../db/embedded';

/**
 * The start contract end to end: `npm start`'s entry on a fresh DATA_DIR with the embedded PostgreSQL, a clean
 * SIGTERM, a second start on the same data, and recovery after kill -9.
 */
const root = path.resolve(__dirname, '../..');
let dataDir: string;
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  const pid = postmasterPid();
  if (pid) process.kill(pid, 'SIGINT');
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

function postmasterPid(): number | undefined {
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

async function start(env: Record<string, string>): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const port = await freePort();
  // The server process itself (as `npm start` runs it), so that SIGKILL hits the server and not a wrapper.
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ADMIN_PASSWORD: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v3/api-docs`);
      if (res.status === 200) return { child, port, output: () => out };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready: ${out}`);
}

const exited = (c: ChildProcess) => new Promise<number | null>((r) => (c.exitCode !== null ? r(c.exitCode) : c.once('exit', (code) => r(code))));

async function loginStatus(port: number, password: string) {
  const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('server process', () => {
  it('starts, stops cleanly, restarts on the same data and recovers after kill -9', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-main-'));
    const first = await start({ ADMIN_PASSWORD: '' });
    const printed = /with password: (\S+)/.exec(first.output())?.[1];
    expect(printed, first.output()).toBeTruthy();
    const login = await loginStatus(first.port, printed!);
    expect(login.status).toBe(200);
    expect(login.body.data).toMatchObject({ token_type: 'Bearer', expires_in: 900 });

    first.child.kill('SIGTERM');
    expect(await exited(first.child), first.output()).toBe(0);
    expect(postmasterPid()).toBeUndefined();

    const second = await start({});
    expect(second.output()).not.toMatch(/with password/);
    expect((await loginStatus(second.port, printed!)).status).toBe(200);
    second.child.kill('SIGKILL');
    await exited(second.child);
    expect(postmasterPid()).toBeDefined(); // the orphan the next start must handle

    const third = await start({});
    expect((await loginStatus(third.port, printed!)).status).toBe(200);
    third.child.kill('SIGINT');
    expect(await exited(third.child), third.output()).toBe(0);
    expect(postmasterPid()).toBeUndefined();
    // kill -9 left nothing running behind: the killed server is gone and nobody else holds the data directory.
    expect(second.child.exitCode !== null || second.child.signalCode !== null).toBe(true);
  }, 180_000);
});
