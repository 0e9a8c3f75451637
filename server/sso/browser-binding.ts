import crypto from 'node:crypto';
import { parseCookie, stringifySetCookie } from 'cookie';

/*
 * Login CSRF: without a tie to the browser, an attacker could start an SSO login with their own IdP account and send
 * a victim the callback link (or the landing page with the one-time code): the victim's browser would be signed in as
 * the attacker and whatever the victim then saves would land in the attacker's account.
 *
 * GET /api/auth/sso/{providerId}/authorize therefore sets an HttpOnly cookie holding a random browser secret, and the
 * login state (then the code) keeps its SHA-256. POST /api/auth/sso/exchange trades a code only when the request
 * carries the same secret. The check sits at the exchange, not the callback, because a SAML ACS is a cross-site POST
 * that a SameSite=Lax cookie does not reach, while the exchange is the landing page's own same-origin request.
 * A browser keeps one secret for all its logins (it is reused while valid), so two logins in two tabs both work.
 * The cookie's Path is the SSO routes under the installation's base URL: behind a proxy that serves the platform at
 * /analytics/, the browser asks for /analytics/api/auth/sso/exchange and would not send a cookie of /api/auth/sso.
 */

const COOKIE = 'analytics_sso_browser';
/** As long as a login state lives: the cookie is only needed between authorize and exchange. */
const MAX_AGE_S = 10 * 60;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** The browser secret a request carries (a well-formed one), if any. */
function browserSecret(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  const value = parseCookie(cookieHeader)[COOKIE];
  return value && SECRET.test(value) ? value : undefined;
}

export interface BrowserBinding {
  /** Kept with the login state and the code. */
  hash: string;
  /** The Set-Cookie header the authorize redirect carries (the secret renewed for another ten minutes). */
  setCookie: string;
}

/** {base path}/api/auth/sso, with exactly one slash between. */
const cookiePath = (base: URL) => `${base.pathname.replace(/\/+$/, '')}/api/auth/sso`;

/** The binding of a login starting now: the browser's secret when it has one, else a new one. */
export function bindBrowser(cookieHeader: string | undefined, base: URL): BrowserBinding {
  const secret = browserSecret(cookieHeader) ?? crypto.randomBytes(32).toString('base64url');
  return {
    hash: sha256(secret),
    setCookie: stringifySetCookie({
      name: COOKIE,
      value: secret,
      path: cookiePath(base),
      maxAge: MAX_AGE_S,
      httpOnly: true,
      secure: base.protocol === 'https:',
      sameSite: 'lax',
    }),
  };
}

/** Whether the request comes from the browser a login was bound to. */
export function sameBrowser(cookieHeader: string | undefined, hash: string | null): boolean {
  const secret = browserSecret(cookieHeader);
  if (!secret || !hash) return false;
  const a = Buffer.from(sha256(secret));
  const b = Buffer.from(hash);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
