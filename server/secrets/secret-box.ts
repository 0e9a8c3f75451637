import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Encrypts data-source and channel secrets at rest with AES-256-GCM. The key comes from SECRETS_KEY (base64 of
 * 32 bytes; required when several nodes share one database) or is generated once into DATA_DIR/secrets.key.
 * Boxes are versioned (`v1:`) so that the format can change without guessing.
 */
export interface SecretBox {
  seal(plain: unknown): string;
  open<T = unknown>(box: string): T;
}

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  return {
    seal(plain) {
      const iv = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')}`;
    },
    open<T>(box: string): T {
      if (!box.startsWith('v1:')) throw new Error('unknown secret box format');
      const raw = Buffer.from(box.slice(3), 'base64');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      return JSON.parse(plain) as T;
    },
  };
}

export async function loadSecretsKey(dataDir: string, fromEnv?: string): Promise<Uint8Array> {
  if (fromEnv) {
    const key = Buffer.from(fromEnv, 'base64');
    if (key.length !== 32) throw new Error('SECRETS_KEY must be the base64 of exactly 32 bytes');
    return new Uint8Array(key);
  }
  const file = path.join(dataDir, 'secrets.key');
  if (existsSync(file)) return new Uint8Array(Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64'));
  await fs.mkdir(dataDir, { recursive: true });
  const key = crypto.randomBytes(32);
  // wx: two processes starting at once must not both write a key.
  await fs
    .writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' })
    .catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
  return new Uint8Array(Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64'));
}
