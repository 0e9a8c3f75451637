import { loadConfig } from './config';
import { launchDatabase } from './database-launch';

/**
 * `npm start`: the embedded PostgreSQL is started before the app's modules are loaded, so that its start-up runs on
 * the other core meanwhile instead of after them (bench:startup, second start: the postmaster takes ~120 ms to be
 * ready, the app's modules ~300 ms to load). Only config and the launch are imported statically here.
 */
async function main() {
  const config = loadConfig();
  const database = launchDatabase(config, (m) => {
    if (/error|fatal|panic|orphan/i.test(m)) console.error(`[postgres] ${m}`);
  });
  // Until serve() puts the orderly shutdown in their place: a Ctrl-C or SIGTERM while the app loads stops the embedded
  // PostgreSQL (its own process group, so the signal does not reach it) instead of leaving it to the next start.
  const early = (signal: NodeJS.Signals) => {
    void database.ready
      .then(
        ({ embedded }) => embedded?.stop(),
        () => undefined,
      )
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', early);
  process.once('SIGTERM', early);
  await database.handedOff;
  const { serve } = await import('./serve');
  await serve(config, database);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
