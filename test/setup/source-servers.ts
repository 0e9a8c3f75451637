// vitest globalSetup: makes sure the real source servers the connector tests use answer on loopback.
// PostgreSQL is the machine's (started if stopped), MariaDB and ClickHouse are installed and started by the
// scripts under scripts/test-services on first use (install time is paid once per machine).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

export interface SourceServers {
  mariadb: { host: string; port: number };
  clickhouse: { host: string; http_port: number };
}

declare module 'vitest' {
  interface ProvidedContext {
    sourceServers: SourceServers;
  }
}

const run = promisify(execFile);
const scripts = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'test-services');
const envFile = process.env.ANALYTICS_TEST_SERVICES_ENV ?? '/tmp/analytics-test-services.env';

export default async function setup(project?: TestProject): Promise<() => Promise<void>> {
  // One after the other: each may need apt-get, which holds dpkg's lock.
  for (const script of [
    'ensure-postgresql.sh',
    'ensure-mariadb.sh',
    'ensure-clickhouse.sh',
    'ensure-redis.sh',
    'ensure-haproxy.sh',
  ]) {
    try {
      await run('bash', [join(scripts, script)], {
        env: { ...process.env, ANALYTICS_TEST_SERVICES_ENV: envFile },
        timeout: 15 * 60_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`${script} failed: ${e.stderr?.trim() || e.message}`);
    }
  }
  const env = parseEnv(await readFile(envFile, 'utf8'));
  const servers: SourceServers = {
    mariadb: { host: env.MARIADB_HOST ?? '127.0.0.1', port: Number(env.MARIADB_PORT ?? 3306) },
    clickhouse: { host: env.CLICKHOUSE_HOST ?? '127.0.0.1', http_port: Number(env.CLICKHOUSE_HTTP_PORT ?? 8123) },
  };
  // Both ways: `inject('sourceServers')` in tests, and the environment for anything spawned later.
  project?.provide('sourceServers', servers);
  Object.assign(process.env, env);
  // The servers stay up for the next run: starting them is cheap, but nothing here owns them exclusively.
  return async () => {};
}

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2];
  }
  return out;
}
