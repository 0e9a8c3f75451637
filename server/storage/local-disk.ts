import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { checkKey, StorageNotFoundError, type ObjectStorage, type StoredObject } from './object-storage';

/*
 * file://<dir>: objects are files under one folder of this node (the one-node default, DATA_DIR/storage). A write
 * goes to a temporary name beside the target and is renamed into place, so a reader never sees half an object.
 */
export class LocalDiskStorage implements ObjectStorage {
  readonly kind = 'file' as const;
  constructor(readonly root: string) {}

  private full(key: string): string {
    return path.join(this.root, ...checkKey(key).split('/'));
  }

  private async writeVia(key: string, write: (tmp: string) => Promise<void>): Promise<void> {
    const target = this.full(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const tmp = `${target}.${randomUUID()}.tmp`;
    try {
      await write(tmp);
      await fs.rename(tmp, target);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw e;
    }
  }

  putFile(key: string, file: string): Promise<void> {
    return this.writeVia(key, (tmp) => fs.copyFile(file, tmp));
  }

  put(key: string, body: Buffer | string | Readable): Promise<void> {
    return this.writeVia(key, async (tmp) => {
      if (typeof body === 'string' || Buffer.isBuffer(body)) await fs.writeFile(tmp, body);
      else await pipeline(body, createWriteStream(tmp));
    });
  }

  async get(key: string): Promise<Readable> {
    const file = this.full(key);
    const handle = await fs.open(file, 'r').catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? new StorageNotFoundError(key) : e;
    });
    // Opened first so a missing key fails here, not on the stream's first read.
    return handle.createReadStream({ autoClose: true });
  }

  async getToFile(key: string, file: string): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      await fs.copyFile(this.full(key), tmp);
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw (e as NodeJS.ErrnoException).code === 'ENOENT' ? new StorageNotFoundError(key) : e;
    }
  }

  async head(key: string): Promise<StoredObject | null> {
    const st = await fs.stat(this.full(key)).catch(() => null);
    return st?.isFile() ? { key, size: st.size, modified: st.mtime } : null;
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.full(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    for await (const o of this.list(prefix)) {
      await this.delete(o.key);
      n++;
    }
    return n;
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    // The folder part of the prefix is walked; the rest filters names, as S3's prefix match does.
    const dirKey = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = dirKey ? this.full(dirKey) : this.root;
    const entries = await fs.readdir(start, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isFile() || e.name.endsWith('.tmp')) continue;
      const abs = path.join(e.parentPath, e.name);
      const key = path.relative(this.root, abs).split(path.sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const st = await fs.stat(abs).catch(() => null);
      if (st) yield { key, size: st.size, modified: st.mtime };
    }
  }

  localPath(key: string): string {
    return this.full(key);
  }

  async check(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    await fs.access(this.root, fs.constants.W_OK);
  }

  async close(): Promise<void> {}
}
