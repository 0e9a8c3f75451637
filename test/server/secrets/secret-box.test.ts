import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, loadSecretsKey } from '../../../server/secrets/secret-box';

describe('secret box', () => {
  it('round-trips and never contains the plain text', () => {
    const box = createSecretBox(crypto.randomBytes(32));
    const sealed = box.seal({ password: 'p@ss-Секрет' });
    expect(sealed.startsWith('v1:')).toBe(true);
    expect(sealed).not.toContain('Секрет');
    expect(box.open(sealed)).toEqual({ password: 'p@ss-Секрет' });
    expect(box.seal('x')).not.toBe(box.seal('x'));
  });

  it('refuses a tampered box and a box sealed under another key', () => {
    const box = createSecretBox(crypto.randomBytes(32));
    const sealed = box.seal({ a: 1 });
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => box.open(`v1:${raw.toString('base64')}`)).toThrow();
    expect(() => createSecretBox(crypto.randomBytes(32)).open(sealed)).toThrow();
  });

  it('generates the key once into the data directory, or takes SECRETS_KEY', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'secrets-'));
    const a = await loadSecretsKey(dir);
    const b = await loadSecretsKey(dir);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect((await fs.stat(path.join(dir, 'secrets.key'))).mode & 0o777).toBe(0o600);
    const env = crypto.randomBytes(32).toString('base64');
    expect(Buffer.from(await loadSecretsKey(dir, env)).toString('base64')).toBe(env);
    await expect(loadSecretsKey(dir, 'c2hvcnQ=')).rejects.toThrow(/32 bytes/);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
