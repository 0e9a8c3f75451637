import { readFileSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchEmbeddedPostgres, type EmbeddedServer } from '../../db/embedded';

/**
 * `npm start` loads the app's modules while the embedded PostgreSQL starts (server/app/main.ts): that holds only if
 * the launch hands off once the postmaster (or initdb) runs, before the database is ready.
 */
const dirs: string[] = [];
const servers: EmbeddedServer[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

/** The command lines of the running processes whose arguments name `dir`. */
function processesNaming(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(dir)) found.push(cmdline);
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

const settled = (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise((r) => setImmediate(() => r(false))),
  ]);

describe('launchEmbeddedPostgres', () => {
  it('hands off while initdb runs, then while the postmaster starts up, before the database is ready', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-launch-'));
    dirs.push(dataDir);

    const first = launchEmbeddedPostgres(dataDir);
    await first.handedOff;
    expect(await settled(first.server)).toBe(false);
    expect(processesNaming(dataDir).some((c) => /\binitdb\b/.test(c))).toBe(true);
    const server = await first.server;
    servers.push(server);
    await server.stop();

    const second = launchEmbeddedPostgres(dataDir);
    await second.handedOff;
    expect(await settled(second.server)).toBe(false);
    expect(processesNaming(server.clusterDir).some((c) => /\bpostgres\b.* -D /.test(c))).toBe(true);
    const again = await second.server;
    servers.push(again);
    expect(again.clusterDir).toBe(server.clusterDir);
    await again.stop();
  });

  it('hands off on a failure too, which only `server` reports', async () => {
    const file = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-launch-'));
    dirs.push(file);
    const notADirectory = path.join(file, 'file');
    await fs.writeFile(notADirectory, 'x');

    const launch = launchEmbeddedPostgres(path.join(notADirectory, 'data'));
    await launch.handedOff;
    await expect(launch.server).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
