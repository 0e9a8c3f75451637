import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../server/app/app';
import { loadConfig } from '../../../server/app/config';
import type { AppDeps } from '../../../server/app/deps';
import { createAppDeps } from '../../../server/app/start';
import type { TestApp } from '../../support/app';
import { rest, type Rest } from '../../support/rest';

/*
 * Another node of a test app: the same database (and secrets key, signing key), but its own process-level state:
 * caches, connectors, windows, data directory and configuration. Two of them stand for two nodes of a cluster
 * without starting processes.
 */

export interface PeerApp {
  app: FastifyInstance;
  deps: AppDeps;
  api: Rest;
  close(): Promise<void>;
}

export async function createPeerApp(of: TestApp, env: Record<string, string> = {}): Promise<PeerApp> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-test-peer-'));
  const { db, systemGroups, signingKey, secretBox } = of.deps;
  // An api node: the test app's own runner does the jobs.
  const config = loadConfig({ DATA_DIR: dataDir, NODE_ROLE: 'api', ...env });
  const deps = createAppDeps({ db, config, systemGroups, signingKey, secretBox });
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    api: rest(app),
    async close() {
      await app.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** REDIS_URL and a key prefix no other test file (or run) uses: files running in parallel never meet in Redis. */
export function redisEnv(): Record<string, string> {
  return {
    REDIS_URL: process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `test-${crypto.randomUUID()}:`,
  };
}
