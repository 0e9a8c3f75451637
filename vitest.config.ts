import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One metadata database per run (embedded PostgreSQL or TEST_DATABASE_URL), plus the real source servers.
    globalSetup: [
      'test/setup/global-db.ts',
      'test/setup/source-servers.ts',
      'test/setup/object-store.ts',
      'test/setup/openapi-count.ts',
    ],
    // Counts the answers each file checked against the served OpenAPI document (test/support/openapi-validation.ts).
    setupFiles: ['test/setup/openapi-count-file.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
  },
});
