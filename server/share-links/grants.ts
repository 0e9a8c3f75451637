import crypto from 'node:crypto';
import type { AppDeps } from '../app/deps';

/*
 * The grant of a password link: what POST /api/public/link/{token}/unlock answers and the viewer sends back in
 * X-Share-Grant. It is signed, not stored: `<link id>.<grant version>.<expiry, unix s>.<HMAC-SHA256>`, under a key
 * derived from the installation's signing key for this one purpose. It names the link's grant version, which
 * rotation, suspension, revocation and a password change move: every grant issued before dies at once.
 */
const GRANT_TTL_SECONDS = 3600;
const MAX_GRANT_LENGTH = 200;

const keys = new WeakMap<Uint8Array, Buffer>();
function grantKey(deps: Pick<AppDeps, 'signingKey'>): Buffer {
  let key = keys.get(deps.signingKey);
  if (!key) {
    key = crypto.createHmac('sha256', deps.signingKey).update('share-link-grant:v1').digest();
    keys.set(deps.signingKey, key);
  }
  return key;
}

const mac = (key: Buffer, payload: string) => crypto.createHmac('sha256', key).update(payload).digest();

interface GrantSubject {
  id: number;
  grantVersion: number;
}

export function issueGrant(
  deps: Pick<AppDeps, 'signingKey'>,
  link: GrantSubject,
): { grant: string; expires_at: string } {
  const expires = Math.floor(Date.now() / 1000) + GRANT_TTL_SECONDS;
  const payload = `${link.id}.${link.grantVersion}.${expires}`;
  return {
    grant: `${payload}.${mac(grantKey(deps), payload).toString('base64url')}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

/** True when the grant is this link's, of its current grant version, unexpired and signed by this installation. */
export function grantValid(deps: Pick<AppDeps, 'signingKey'>, link: GrantSubject, grant: string | undefined): boolean {
  if (!grant || grant.length > MAX_GRANT_LENGTH) return false;
  const parts = grant.split('.');
  if (parts.length !== 4) return false;
  const [id, version, expires, signature] = parts;
  const payload = `${id}.${version}.${expires}`;
  const expected = mac(grantKey(deps), payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return false;
  return (
    Number(id) === link.id && Number(version) === link.grantVersion && Number(expires) > Math.floor(Date.now() / 1000)
  );
}
