import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalDiskStorage } from './local-disk';
import type { ObjectStorage } from './object-storage';
import { parseS3Url, S3Storage } from './s3';

/** The store STORAGE_URL names: file://<dir> (default DATA_DIR/storage) or s3://<bucket>/<prefix>?…. */
export function openStorage(url: string | undefined, dataDir: string): ObjectStorage {
  if (!url) return new LocalDiskStorage(path.join(dataDir, 'storage'));
  if (url.startsWith('file:')) return new LocalDiskStorage(fileURLToPath(url));
  if (url.startsWith('s3:')) return new S3Storage(parseS3Url(url));
  throw new Error('STORAGE_URL: file://<folder> or s3://<bucket>/<prefix>?endpoint=…&region=…');
}
