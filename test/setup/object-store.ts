// vitest globalSetup: an S3-compatible server (s3rver) on loopback for the tests of STORAGE_URL=s3://…, with one
// bucket. Tests take a prefix of their own (test/support/object-store.ts), so files running in parallel never meet.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  interface ProvidedContext {
    /** http://127.0.0.1:<port> of the S3-compatible server, and its bucket. */
    objectStore: { endpoint: string; bucket: string };
  }
}

export const TEST_BUCKET = 'analytics-test';

export default async function setup(project?: TestProject): Promise<() => Promise<void>> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: TEST_BUCKET, configs: [] }],
  });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  project?.provide('objectStore', { endpoint, bucket: TEST_BUCKET });
  // s3rver's fixed credentials, for every app a test (or a node it spawns) builds with an s3:// STORAGE_URL.
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    TEST_S3_ENDPOINT: endpoint,
    TEST_S3_BUCKET: TEST_BUCKET,
  });
  return async () => {
    await server.close();
    await fs.rm(directory, { recursive: true, force: true });
  };
}
