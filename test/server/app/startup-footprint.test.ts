import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { cloneTemplateDatabase } from '../../support/test-database';
import { exited, repoRoot, startServer, stopLeftovers } from './server-process';

/**
 * The footprint guard: the server built and started as `npm start` does (package.json's start command, so the build
 * check and the node flags count) on a fresh DATA_DIR, idle for 5 s after it is ready, must hold at most 170 MB of
 * resident memory. Memory, not time: stable on a shared machine. The database is a clone of the run's template
 * (DATABASE_URL), so the embedded PostgreSQL's own start is not part of the test; its processes are not counted
 * anyway, only the node process's VmRSS.
 */
const LIMIT_MB = 170;
const IDLE_MS = 5_000;

let dataDir = '';
const children: ChildProcess[] = [];
let dropClone: (() => Promise<void>) | undefined;

afterAll(async () => {
  await stopLeftovers(children, dataDir);
  await dropClone?.();
});

function vmRssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line.split(/\s+/)[1]) / 1024;
}

describe('startup footprint', () => {
  it(`idles at most ${LIMIT_MB} MB of RSS after an npm start`, async () => {
    const clone = await cloneTemplateDatabase(inject('databaseUrl'));
    dropClone = clone.drop;
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-footprint-'));
    const server = await startServer(repoRoot, { DATA_DIR: dataDir, DATABASE_URL: clone.url });
    children.push(server.child);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    // The start command ends in `exec node ...`: the child's pid is the server's.
    const rss = vmRssMb(server.child.pid!);
    console.log(`startup footprint: node idle RSS ${rss.toFixed(0)} MB (limit ${LIMIT_MB} MB)`);
    server.child.kill('SIGTERM');
    expect(await exited(server.child), server.output()).toBe(0);
    expect(rss).toBeLessThanOrEqual(LIMIT_MB);
  }, 180_000);
});
