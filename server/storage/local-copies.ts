import fs from 'node:fs/promises';
import path from 'node:path';
import { StorageNotFoundError, type ObjectStorage } from './object-storage';

/*
 * A node's bounded cache of local copies of stored objects that must be opened as files (an extract's DuckDB load, a
 * file source's DuckDB database, a driver plugin module). Keys are immutable (object-storage.ts), so a copy is valid
 * for as long as it exists. On file:// the object's own path is used and nothing is copied. On S3 a miss downloads
 * the object once (concurrent callers wait for the same download) into <dir>/<key>; when the copies pass the byte
 * budget the least recently used ones that nobody holds are deleted.
 */

interface Copy {
  file: string;
  size: number;
  lastUsed: number;
  holders: number;
}

export interface HeldCopy {
  /** The local file to open. */
  file: string;
  /** Call when done reading: the copy may be evicted after that. */
  release(): void;
}

export class LocalCopies {
  private readonly copies = new Map<string, Copy>();
  private readonly loading = new Map<string, Promise<Copy>>();
  private bytes = 0;

  constructor(
    private readonly storage: ObjectStorage,
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  /** A local file holding the object (downloaded on a miss); StorageNotFoundError when the key does not exist. */
  async hold(key: string): Promise<HeldCopy> {
    const own = this.storage.localPath(key);
    if (own !== undefined) {
      if (!(await this.storage.head(key))) throw new StorageNotFoundError(key);
      return { file: own, release: () => undefined };
    }
    let copy = this.copies.get(key);
    if (!copy) {
      let pending = this.loading.get(key);
      if (!pending) {
        pending = this.download(key).finally(() => this.loading.delete(key));
        this.loading.set(key, pending);
      }
      copy = await pending;
    }
    copy.holders++;
    copy.lastUsed = Date.now();
    let released = false;
    return {
      file: copy.file,
      release: () => {
        if (released) return;
        released = true;
        copy.holders--;
        void this.evict();
      },
    };
  }

  /** Drops this node's copy of a key whose object was deleted (a superseded load); held copies go when released. */
  async forget(key: string): Promise<void> {
    const copy = this.copies.get(key);
    if (!copy || copy.holders > 0) return;
    this.copies.delete(key);
    this.bytes -= copy.size;
    await fs.rm(copy.file, { force: true });
  }

  /** Bytes of local copies now (metrics, tests). */
  get size(): number {
    return this.bytes;
  }

  private async download(key: string): Promise<Copy> {
    const file = path.join(this.dir, ...key.split('/'));
    await this.storage.getToFile(key, file);
    const { size } = await fs.stat(file);
    const copy: Copy = { file, size, lastUsed: Date.now(), holders: 0 };
    this.copies.set(key, copy);
    this.bytes += size;
    await this.evict();
    return copy;
  }

  private async evict(): Promise<void> {
    if (this.bytes <= this.maxBytes) return;
    const idle = [...this.copies.entries()]
      .filter(([, c]) => c.holders === 0)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [key, copy] of idle) {
      if (this.bytes <= this.maxBytes) break;
      this.copies.delete(key);
      this.bytes -= copy.size;
      await fs.rm(copy.file, { force: true });
    }
  }

  /** Removes every copy (a node's start: copies of a previous run are not trusted to be whole). */
  async clear(): Promise<void> {
    this.copies.clear();
    this.bytes = 0;
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
