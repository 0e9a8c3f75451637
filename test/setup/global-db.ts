import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connectDatabase } from '../../db/client';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../db/embedded';
import { runMigrations } from '../../db/migrate';
import { bootstrap } from '../../server/app/bootstrap';
import { TEST_ADMIN } from '../support/constants';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated and seeded template database; each test file clones it (see test/support/app.ts). */
    databaseUrl: string;
  }
}

/**
 * One migrated, seeded template database per test run: on TEST_DATABASE_URL's server when given, else on an
 * embedded PostgreSQL started here. Each test file gets its own clone, so installation-wide settings changed by one
 * file never leak into another running in parallel; tests still build their own users and objects.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedServer | undefined;
  let dir: string | undefined;
  let url: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  if (process.env.TEST_DATABASE_URL) {
    const name = `analytics_test_${crypto.randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const u = new URL(process.env.TEST_DATABASE_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-test-'));
    embedded = await startEmbeddedPostgres(dir, { database: 'analytics_test' });
    url = embedded.url;
  }
  const database = connectDatabase(url, { max: 2 });
  try {
    await runMigrations(database.db);
    await bootstrap(database.db, { adminUsername: TEST_ADMIN.username, adminPassword: TEST_ADMIN.password });
  } finally {
    await database.close();
  }
  project.provide('databaseUrl', url);
  return async () => {
    await dropDatabase?.();
    await embedded?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  };
}
