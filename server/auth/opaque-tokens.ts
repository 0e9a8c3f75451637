import crypto from 'node:crypto';

/** Opaque random tokens (refresh, API, share grants) are stored only as their SHA-256. */
export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}
