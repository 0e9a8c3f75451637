import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import { connectDatabase } from '../../db/client';
import { buildApp } from '../../server/app/app';
import { loadSigningKey } from '../../server/auth/signing-key';
import { loadConfig } from '../../server/app/config';
import type { AppDeps } from '../../server/app/deps';
import { createAppDeps } from '../../server/app/start';
import { loadSystemGroupIds } from '../../server/users/system-groups';
import { cloneTemplateDatabase } from './test-database';
import { createSecretBox, loadSecretsKey } from '../../server/secrets/secret-box';
import { rest, type Rest } from './rest';
import { validateInjectedResponses } from './openapi-validation';

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  /** The app's own database (a clone of the run's template): other processes may join it (test/cluster). */
  databaseUrl: string;
  close(): Promise<void>;
}

/** A whole application on a database of its own (a clone of the run's template), driven through fastify.inject. */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const clone = await cloneTemplateDatabase(inject('databaseUrl'));
  const database = connectDatabase(clone.url, { max: 5 });
  // A data directory of its own (uploads, DuckDB files), removed with the app.
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-test-data-'));
  const config = loadConfig({ DATA_DIR: dataDir, ...env });
  const deps = createAppDeps({
    db: database.db,
    config,
    systemGroups: await loadSystemGroupIds(database.db),
    signingKey: await loadSigningKey(database.db),
    // SECRETS_KEY when given (the cluster's nodes share it with the test's own app), else a key of its own.
    secretBox: createSecretBox(
      config.secretsKey ? await loadSecretsKey(dataDir, config.secretsKey) : crypto.randomBytes(32),
    ),
  });
  const app = await buildApp(deps);
  await app.ready();
  // Every answer the tests get is checked against the document the app serves.
  validateInjectedResponses(app);
  return {
    app,
    deps,
    databaseUrl: clone.url,
    async close() {
      await app.close();
      await database.close();
      await clone.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The app of one test file: registers its own beforeAll (start) and afterAll (close), so a file's hooks registered
 * after this call see a started app and run their clean-up before it closes. `t` and `api` may be taken at module
 * level; they reach the app only when used inside a hook or a test.
 */
export function useTestApp(
  env: Record<string, string> = {},
  opts: { timeout?: number } = {},
): { t: TestApp; api: Rest } {
  let current: TestApp | undefined;
  const started = (): TestApp => {
    if (!current) throw new Error('useTestApp: the app is used before its beforeAll has run (or after it closed)');
    return current;
  };
  const t: TestApp = {
    get app() {
      return started().app;
    },
    get deps() {
      return started().deps;
    },
    get databaseUrl() {
      return started().databaseUrl;
    },
    close: () => started().close(),
  };
  beforeAll(async () => {
    current = await createTestApp(env);
  }, opts.timeout);
  afterAll(async () => {
    const app = current;
    current = undefined;
    await app?.close();
  });
  return { t, api: rest(() => started().app) };
}
