import type { Readable } from 'node:stream';

/*
 * THE storage module: where uploaded files, imported file copies, extracts, export files and driver plugins live
 * (STORAGE_URL). One node keeps them on its own disk (file://, the default, DATA_DIR/storage); a cluster puts them in
 * an S3-compatible store (s3://bucket/prefix?endpoint=…), so any node reads what another made. Objects are immutable:
 * a new version of anything (an extract load, a re-uploaded file) is written under a new key and the old key is
 * deleted later, so a node's local copy of a key (local-copies.ts) never goes stale.
 *
 * Keys are relative, '/'-separated, without '..' or a leading '/': `extracts/dataset-12/<load id>.duckdb`.
 */

export interface StoredObject {
  key: string;
  size: number;
  modified: Date;
}

export interface ObjectStorage {
  /** 'file' (one node's disk) or 's3'; for logs and /readyz. */
  readonly kind: 'file' | 's3';
  /** Stores a local file under the key (streamed; multipart on S3). */
  putFile(key: string, file: string): Promise<void>;
  /** Stores bytes or a stream under the key. */
  put(key: string, body: Buffer | string | Readable): Promise<void>;
  /** The object's bytes as a stream; StorageNotFoundError when there is no such key. */
  get(key: string): Promise<Readable>;
  /** Copies the object into a local file (written beside it, then renamed); StorageNotFoundError when missing. */
  getToFile(key: string, file: string): Promise<void>;
  /** Size and time of the object, or null. */
  head(key: string): Promise<StoredObject | null>;
  /** Deletes the object; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every object under the prefix ('exports/' …); answers how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** The objects under the prefix. */
  list(prefix: string): AsyncIterable<StoredObject>;
  /**
   * The object's own path when the store is this node's disk (file://): readers open it in place instead of copying
   * it. Undefined for remote stores.
   */
  localPath(key: string): string | undefined;
  /** Throws when the store cannot be reached (GET /readyz). */
  check(): Promise<void>;
  close(): Promise<void>;
}

export class StorageNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`object not found: ${key}`);
    this.name = 'StorageNotFoundError';
  }
}

const KEY = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[\w.\-/=]+$/;

/** Refuses a key that could leave the store's root or is not one of ours (a programming error, never user input). */
export function checkKey(key: string): string {
  if (!KEY.test(key) || key.includes('//')) throw new Error(`bad storage key: ${JSON.stringify(key)}`);
  return key;
}
