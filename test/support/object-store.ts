import crypto from 'node:crypto';
import { inject } from 'vitest';

/**
 * A STORAGE_URL on the run's S3-compatible server (test/setup/object-store.ts) under a prefix of its own, so an app
 * built with it stores files, extracts and exports there and shares nothing with other tests.
 */
export function s3StorageUrl(name = 'app'): string {
  const { endpoint, bucket } = inject('objectStore');
  const prefix = `${name}-${crypto.randomUUID()}`;
  return `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&force_path_style=true`;
}
