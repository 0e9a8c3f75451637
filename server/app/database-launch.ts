import fs from 'node:fs/promises';
import path from 'node:path';
import { StartupError, launchEmbeddedPostgres, type EmbeddedServer } from '../../db/embedded';
import type { AppConfig } from './config';

/**
 * The metadata database on its way: DATABASE_URL's, or an embedded PostgreSQL started in DATA_DIR. A module of its
 * own with few imports, so that main can start the embedded PostgreSQL before it loads the app: the postmaster
 * starts on the other core while this process reads the app's modules (bench:startup, second start).
 */
export interface DatabaseLaunch {
  /** Settles once the rest of the start runs in other processes, or failed (EmbeddedLaunch.handedOff). */
  handedOff: Promise<void>;
  /** The database's URL and the embedded server, if one was started; rejects with the start's failure. */
  ready: Promise<{ url: string; embedded?: EmbeddedServer }>;
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir never returns for a path below /proc (the kernel answers
 * ENOENT for the child and EEXIST for the parent, and it retries forever).
 */
async function makeDirectory(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = path.resolve(dir);
  while (
    !(await fs.stat(at).then(
      () => true,
      () => false,
    ))
  ) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
    at = path.dirname(at);
  }
  for (const d of missing)
    await fs.mkdir(d).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
}

async function dataDirectory(config: AppConfig): Promise<void> {
  try {
    await makeDirectory(config.dataDir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new StartupError(
      `Cannot start: DATA_DIR ${config.dataDir} cannot be created (${code}); set DATA_DIR to a folder this user can write.`,
    );
  }
}

/** Starts what the database needs; nothing of it waits for the caller. */
export function launchDatabase(config: AppConfig, log: (m: string) => void = () => undefined): DatabaseLaunch {
  const made = dataDirectory(config);
  const { databaseUrl } = config;
  if (databaseUrl) {
    const ready = made.then(() => ({ url: databaseUrl }));
    ready.catch(() => undefined); // seen by whoever awaits `ready`
    return { handedOff: made.catch(() => undefined), ready };
  }
  const embedded = made.then(() => launchEmbeddedPostgres(config.dataDir, { log }));
  const ready = embedded.then(async (launch) => {
    const server = await launch.server;
    return { url: server.url, embedded: server };
  });
  ready.catch(() => undefined); // seen by whoever awaits `ready`
  return { handedOff: embedded.then((launch) => launch.handedOff).catch(() => undefined), ready };
}
