import crypto from 'node:crypto';
import type { DbOrTx } from '../../db/client';
import { ensureSetting } from '../service/store';

/**
 * The HMAC key for session tokens lives in the metadata database so that every API node of one installation
 * accepts the tokens of the others.
 */
export async function loadSigningKey(db: DbOrTx): Promise<Uint8Array> {
  const stored = await ensureSetting(db, 'auth.signing_key', crypto.randomBytes(64).toString('base64'));
  return new Uint8Array(Buffer.from(stored, 'base64'));
}
