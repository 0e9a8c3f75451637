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
  await database.handedOff;
  const { serve } = await import('./serve');
  await serve(config, database);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
