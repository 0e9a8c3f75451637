import { connectDatabase, type Database } from '../db/client';
import { startEmbeddedPostgres, type EmbeddedServer } from '../db/embedded';
import { runMigrations } from '../db/migrate';
import { bootstrap, type BootstrapResult } from './bootstrap';
import type { AppConfig } from './config';
import { createCaches, type AppDeps } from './deps';
import { createSecretBox, loadSecretsKey } from './secrets/secret-box';

export interface Runtime {
  deps: AppDeps;
  database: Database;
  embedded?: EmbeddedServer;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

/** Database (external or embedded) -> migrations -> first-start seeding. Shared by main.ts and scripts. */
export async function startRuntime(config: AppConfig, log: (m: string) => void = () => undefined): Promise<Runtime> {
  let embedded: EmbeddedServer | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres(config.dataDir, { log });
    url = embedded.url;
  }
  const database = connectDatabase(url);
  try {
    await runMigrations(database.db);
    const boot = await bootstrap(database.db, { adminUsername: config.adminUsername, adminPassword: config.adminPassword });
    const deps: AppDeps = {
      db: database.db,
      config,
      systemGroups: boot.systemGroups,
      signingKey: boot.signingKey,
      secretBox: createSecretBox(await loadSecretsKey(config.dataDir, config.secretsKey)),
      caches: createCaches(),
    };
    return {
      deps,
      database,
      embedded,
      bootstrap: boot,
      async close() {
        await database.close();
        await embedded?.stop();
      },
    };
  } catch (e) {
    await database.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw e;
  }
}
