import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCopies } from '../../../server/storage/local-copies';
import { StorageNotFoundError, type ObjectStorage } from '../../../server/storage/object-storage';
import { openStorage } from '../../../server/storage/open-storage';
import { s3StorageUrl } from '../../support/object-store';

/** Both implementations of the storage module must behave the same: the one-node disk and the S3-compatible store. */

const read = async (s: Readable) => {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
};
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

let dir = '';
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'analytics-storage-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe.each([
  ['file://', () => openStorage(undefined, path.join(dir, `disk-${crypto.randomUUID()}`))],
  ['s3://', () => openStorage(s3StorageUrl('storage'), dir)],
])('storage %s', (_name, open) => {
  let storage: ObjectStorage;
  beforeAll(() => {
    storage = open();
  });
  afterAll(async () => {
    await storage.close();
  });

  it('stores bytes, streams and files, and reads them back whole', async () => {
    const big = crypto.randomBytes(9 * 1024 * 1024 + 123); // more than one multipart part
    const file = path.join(dir, `big-${crypto.randomUUID()}`);
    await fs.writeFile(file, big);
    await storage.put('a/text.txt', 'привет');
    await storage.put('a/stream.bin', Readable.from([Buffer.from('one'), Buffer.from('two')]));
    await storage.putFile('a/b/big.bin', file);
    expect((await read(await storage.get('a/text.txt'))).toString()).toBe('привет');
    expect((await read(await storage.get('a/stream.bin'))).toString()).toBe('onetwo');
    expect(sha(await read(await storage.get('a/b/big.bin')))).toBe(sha(big));
    const copy = path.join(dir, `copy-${crypto.randomUUID()}`);
    await storage.getToFile('a/b/big.bin', copy);
    expect(sha(await fs.readFile(copy))).toBe(sha(big));
    expect((await storage.head('a/b/big.bin'))?.size).toBe(big.length);
    const keys: string[] = [];
    for await (const o of storage.list('a/')) keys.push(o.key);
    expect(keys.sort()).toEqual(['a/b/big.bin', 'a/stream.bin', 'a/text.txt']);
  });

  it('answers a missing key with StorageNotFoundError and deletes by key and prefix', async () => {
    await expect(storage.get('nope/x')).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(storage.getToFile('nope/x', path.join(dir, 'never'))).rejects.toBeInstanceOf(StorageNotFoundError);
    expect(await storage.head('nope/x')).toBeNull();
    await storage.delete('nope/x'); // not an error
    await storage.put('p/1', '1');
    await storage.put('p/2', '2');
    await storage.put('q/1', '1');
    expect(await storage.deletePrefix('p/')).toBe(2);
    expect(await storage.head('p/1')).toBeNull();
    expect(await storage.head('q/1')).not.toBeNull();
    await storage.check();
  });

  it('refuses keys that could leave its root', async () => {
    for (const key of ['../x', '/abs', 'a/../../b', 'a//b', 'a/./b', ''])
      await expect(storage.put(key, 'x'), key).rejects.toThrow(/bad storage key/);
  });

  it('keeps bounded local copies: one download per key, least recently used evicted, held copies kept', async () => {
    const copies = new LocalCopies(storage, path.join(dir, `copies-${crypto.randomUUID()}`), 2_500);
    for (const k of ['c/1', 'c/2', 'c/3']) await storage.put(k, Buffer.alloc(1_000, k));
    const [a, b] = await Promise.all([copies.hold('c/1'), copies.hold('c/1')]);
    expect(a.file).toBe(b.file);
    expect((await fs.readFile(a.file)).length).toBe(1_000);
    const two = await copies.hold('c/2');
    two.release();
    a.release();
    b.release();
    const three = await copies.hold('c/3');
    await expect(copies.hold('c/none')).rejects.toBeInstanceOf(StorageNotFoundError);
    if (storage.kind === 's3') {
      // 3,000 bytes passed the budget: the least recently used idle copy (c/1) went, c/3 is held.
      expect(copies.size).toBeLessThanOrEqual(2_500);
      await expect(fs.stat(a.file)).rejects.toThrow();
      expect((await fs.stat(three.file)).size).toBe(1_000);
    } else {
      // On this node's disk the object is read in place: nothing is copied.
      expect(three.file).toBe(storage.localPath('c/3'));
      expect(copies.size).toBe(0);
    }
    three.release();
  });
});
