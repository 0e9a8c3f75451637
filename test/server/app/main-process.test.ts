import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exited, login, repoRoot, runningPostmaster, spawnServer, startServer, stopLeftovers } from './server-process';

/**
 * The start contract end to end: `npm start`'s command (build when stale, then the compiled server) on a fresh
 * DATA_DIR with the embedded PostgreSQL, a clean SIGTERM, a second start on the same data, and recovery after
 * kill -9.
 */
let dataDir: string;
const children: ChildProcess[] = [];

afterAll(() => stopLeftovers(children, dataDir));

async function start(env: Record<string, string>) {
  const server = await startServer(repoRoot, { DATA_DIR: dataDir, DATABASE_URL: undefined, ...env });
  children.push(server.child);
  return server;
}

describe('server process', () => {
  it('starts, stops cleanly, restarts on the same data and recovers after kill -9', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-main-'));
    const first = await start({ ADMIN_PASSWORD: '' });
    const printed = /with password: (\S+)/.exec(first.output())?.[1];
    expect(printed, first.output()).toBeTruthy();
    const firstLogin = await login(first.port, printed!);
    expect(firstLogin.status).toBe(200);
    expect(firstLogin.body.data).toMatchObject({ token_type: 'Bearer', expires_in: 900 });

    first.child.kill('SIGTERM');
    expect(await exited(first.child), first.output()).toBe(0);
    expect(runningPostmaster(dataDir)).toBeUndefined();

    const second = await start({});
    expect(second.output()).not.toMatch(/with password/);
    expect((await login(second.port, printed!)).status).toBe(200);
    second.child.kill('SIGKILL');
    await exited(second.child);
    expect(runningPostmaster(dataDir)).toBeDefined(); // the orphan the next start must handle

    const third = await start({});
    expect((await login(third.port, printed!)).status).toBe(200);
    third.child.kill('SIGINT');
    expect(await exited(third.child), third.output()).toBe(0);
    expect(runningPostmaster(dataDir)).toBeUndefined();
    // kill -9 left nothing running behind: the killed server is gone and nobody else holds the data directory.
    expect(second.child.exitCode !== null || second.child.signalCode !== null).toBe(true);
  }, 180_000);

  it('stops the embedded PostgreSQL when a SIGINT comes while the app is still loading', async () => {
    // The postmaster starts before the app's modules load (server/app/main.ts): signal as soon as it runs.
    const server = await spawnServer(repoRoot, { DATA_DIR: dataDir, DATABASE_URL: undefined });
    children.push(server.child);
    const until = Date.now() + 60_000;
    while (runningPostmaster(dataDir) === undefined && server.child.exitCode === null && Date.now() < until)
      await new Promise((r) => setTimeout(r, 5));
    expect(runningPostmaster(dataDir), server.output()).toBeDefined();
    server.child.kill('SIGINT');
    expect(await exited(server.child), server.output()).toBe(130);
    expect(runningPostmaster(dataDir)).toBeUndefined();
  }, 120_000);
});
