import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One metadata database per run (embedded PostgreSQL or TEST_DATABASE_URL), plus the real source servers.
    globalSetup: ['test/setup/global-db.ts', 'test/setup/source-servers.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
  },
});
