import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedClusterDir, freePort } from '../../db/embedded';

/*
 * The platform started as a reader starts it: package.json's start command (scripts/start.mjs with its node flags:
 * the build check, then the build; the same way scripts/bench/startup.ts runs it) on a fresh DATA_DIR with the first administrator's
 * password given, listening on a free loopback port. A test of the documentation then talks to what `npm start`
 * serves, embedded PostgreSQL included, not to an app assembled by the test support.
 */

const root = path.resolve(import.meta.dirname, '../..');
const startCommand = (
  JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start;
const READY_WITHIN_MS = 90_000;

export interface StartedServer {
  baseUrl: string;
  /** Everything the server printed so far (for failure messages). */
  output(): string;
  /** SIGTERM and wait; then the data directory and the embedded cluster are removed. */
  stop(): Promise<void>;
}

export async function startServer(env: { ADMIN_PASSWORD: string }): Promise<StartedServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'quickstart-data-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // As npm runs it: sh -c '<start>' with node_modules/.bin first on PATH; the command execs node at the end.
  const child: ChildProcess = spawn('sh', ['-c', startCommand], {
    cwd: root,
    env: {
      ...process.env,
      PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    // Run as root with a DATA_DIR the postgres user cannot reach, the cluster is kept outside it (see README).
    await fs.rm(await embeddedClusterDir(dataDir), { recursive: true, force: true });
    await fs.rm(dataDir, { recursive: true, force: true });
  };

  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the server exited (${child.exitCode}) before it was ready:\n${out}`);
    }
    if (Date.now() - t0 > READY_WITHIN_MS) {
      await stop();
      throw new Error(`the server was not ready after ${READY_WITHIN_MS} ms:\n${out}`);
    }
    try {
      const res = await fetch(`${baseUrl}/api/v3/api-docs`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, output: () => out, stop };
}
