import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../db/embedded';

/*
 * A node of the platform as a process of its own (server/app/main.ts, jobs started as in production) on a test's
 * database, answering on a loopback port: killed with SIGKILL, it dies as a machine does, its PostgreSQL sessions
 * closed by the kernel, nothing written on the way out.
 */

const repoRoot = path.resolve(import.meta.dirname, '../../..');

export interface NodeProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL, then the exit. */
  kill(): Promise<void>;
}

/** `env`: at least DATABASE_URL and SECRETS_KEY (the same as the test's own app, so both read the source secrets). */
export async function startNodeProcess(env: Record<string, string>): Promise<NodeProcess> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-node-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/app/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const kill = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    }).then(() => fs.rm(dataDir, { recursive: true, force: true }));
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited (${child.exitCode}): ${output}`);
    if (Date.now() > until) {
      await kill();
      throw new Error(`node not ready: ${output}`);
    }
    const res = await fetch(`${url}/api/v3/api-docs`).catch(() => null);
    await res?.arrayBuffer();
    if (res?.status === 200) return { url, child, kill };
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A REST call to the node: its envelope's data, or a throw with the answer. */
export async function nodeCall<T>(node: NodeProcess, method: string, url: string, token: string, body?: unknown) {
  const res = await fetch(`${node.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}
