import type { ConnectorCache } from '../../adapters/sources';
import type { Db } from '../../db/client';
import type { AppConfig } from './config';
import type { SystemGroupIds } from '../users/system-groups';
import type { AppCaches } from '../kernel/app-caches';
import type { CacheBus } from '../cluster/cache-bus';
import type { SecretBox } from '../secrets/secret-box';
import type { LocalQueries } from '../data-sources/query-runner';
import type { JobRunner } from '../jobs/jobs';
import type { ObjectStorage } from '../storage/object-storage';
import type { LocalCopies } from '../storage/local-copies';
import type { SharedRedis } from '../cache/redis';

/*
 * What a request needs from the process, built once at start (or per test app) by createAppDeps in
 * server/app/start.ts. Only types live here, and none of an area's own: an area keeps its caches in a slot of
 * `caches` (server/kernel/app-caches.ts) and plugs its hooks and job kinds in from the composition, so no import
 * leads from here back into the areas.
 */
export interface AppDeps {
  db: Db;
  config: AppConfig;
  systemGroups: SystemGroupIds;
  signingKey: Uint8Array;
  /** Encrypts source and channel secrets at rest. */
  secretBox: SecretBox;
  /** The app's pooled source connectors, one per saved source; closed when the app closes. */
  connectors: ConnectorCache;
  /** The SQL console queries this app runs; aborted when the app closes. */
  localQueries: LocalQueries;
  /** The app's pg-boss jobs (server/jobs): started with the app or on the first send, stopped when it closes. */
  jobs: JobRunner;
  /** The read epoch, the settings cache and every area's own caches (made on first use). */
  caches: AppCaches;
  /** Tells the other nodes what this one's writes made stale and applies what they tell (NOTIFY/LISTEN). */
  cacheBus: CacheBus;
  /** Files, extracts, exports and plugins (STORAGE_URL): this node's disk or an S3-compatible store. */
  storage: ObjectStorage;
  /** This node's bounded local copies of stored objects that are opened as files (DuckDB loads, plugin modules). */
  localCopies: LocalCopies;
  /** REDIS_URL's connection (shared public rate-limit windows, second-level result cache); absent on one node. */
  redis?: SharedRedis;
}

/** What the composition knows before the deps are built: the database, the configuration and what start-up loaded. */
export type BaseDeps = Pick<AppDeps, 'db' | 'config' | 'systemGroups' | 'signingKey' | 'secretBox'>;
