import path from 'node:path';
import { connectDatabase, type Database } from '../../db/client';
import type { EmbeddedServer } from '../../db/embedded';
import { launchDatabase, type DatabaseLaunch } from './database-launch';
import { runMigrations } from '../../db/migrate';
import { bootstrap, type BootstrapResult } from './bootstrap';
import type { AppConfig } from './config';
import type { AppDeps, BaseDeps } from './deps';
import type { Pool } from 'pg';
import { ConnectorCache } from '../../adapters/sources';
import { AppCaches } from '../kernel/app-caches';
import { CacheBus } from '../cluster/cache-bus';
import { JobRunner } from '../jobs/jobs';
import { LocalQueries } from '../data-sources/query-runner';
import { createSecretBox, loadSecretsKey } from '../secrets/secret-box';
import { addWorkspaceDeletionGuard, setWorkspaceStageLookup } from '../workspaces/hooks';
import { workspaceBoundToStage, workspaceStageBinding } from '../pipelines/binding';
import { extractJobKinds, startExtractJobs } from '../etl/run-job';
import { startScheduledExtract } from '../etl/runs';
import { rollupJobKinds, startRollupJobs } from '../rollups/rollups';
import { exportJobKinds, startExportJobs } from '../file-export/run-job';
import { mailingJobKinds, startMailingJobs } from '../mailings/run-job';
import { startScheduledMailing } from '../mailings/mailings';
import { openStorage } from '../storage/open-storage';
import { LocalCopies } from '../storage/local-copies';
import { openSharedRedis } from '../cache/redis';

export interface Runtime {
  deps: AppDeps;
  database: Database;
  embedded?: EmbeddedServer;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

/**
 * The app's deps: fresh caches, connector pools and SQL console runs, with what areas plug into other areas and the
 * job kinds of every area registered here, explicitly: the one place to read which hooks and jobs an app has.
 */
export function createAppDeps(base: BaseDeps, opts: { cacheBus?: boolean } = {}): AppDeps {
  const { config } = base;
  const storage = openStorage(config.storageUrl, config.dataDir);
  const pool = (base.db as unknown as { $client: Pool }).$client;
  const caches = new AppCaches();
  // Off on the embedded database (startRuntime says so): no other node shares it, so nothing to tell or hear.
  const cacheBus = new CacheBus(pool, caches, opts.cacheBus ?? true);
  caches.attach((change) => cacheBus.publish(change));
  const deps: AppDeps = {
    ...base,
    connectors: new ConnectorCache(),
    localQueries: new LocalQueries(base.db),
    // An api node sends jobs and runs none (NODE_ROLE, docs/cluster.md).
    jobs: new JobRunner(pool, { work: config.nodeRole !== 'api' }),
    caches,
    cacheBus,
    storage,
    localCopies: new LocalCopies(storage, path.join(config.dataDir, 'cache', 'storage'), config.storageCacheBytes),
    // Only with REDIS_URL: ioredis is not even loaded otherwise.
    redis: openSharedRedis(config),
  };
  // Pipelines: a workspace bound to a stage cannot be deleted (DELETE /api/workspaces/{id}, reason omitted), and
  // GET /api/workspaces/{id} shows the stage it is bound to (pipeline_stage).
  addWorkspaceDeletionGuard(deps, workspaceBoundToStage);
  setWorkspaceStageLookup(deps, workspaceStageBinding);
  registerJobKinds(deps);
  return deps;
}

/** The job kinds of every area (server/jobs): extract runs and schedules, exports, mailings and their schedules. */
function registerJobKinds(deps: AppDeps): void {
  for (const kind of extractJobKinds(deps, startScheduledExtract)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startExtractJobs(deps));
  for (const kind of rollupJobKinds(deps)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startRollupJobs(deps));
  for (const kind of exportJobKinds(deps)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startExportJobs(deps));
  for (const kind of mailingJobKinds(deps, startScheduledMailing)) deps.jobs.register(kind);
  deps.jobs.onStart(() => startMailingJobs(deps));
}

/**
 * Database (external or embedded) -> migrations -> first-start seeding. Shared by main.ts and scripts; main passes
 * the database it launched before it loaded the app.
 */
export async function startRuntime(
  config: AppConfig,
  log: (m: string) => void = () => undefined,
  launch: DatabaseLaunch = launchDatabase(config, log),
): Promise<Runtime> {
  const { url, embedded } = await launch.ready;
  const database = connectDatabase(url);
  try {
    await runMigrations(database.db);
    const boot = await bootstrap(database.db, {
      adminUsername: config.adminUsername,
      adminPassword: config.adminPassword,
    });
    const deps = createAppDeps(
      {
        db: database.db,
        config,
        systemGroups: boot.systemGroups,
        signingKey: boot.signingKey,
        secretBox: createSecretBox(await loadSecretsKey(config.dataDir, config.secretsKey)),
      },
      { cacheBus: !embedded },
    );
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
