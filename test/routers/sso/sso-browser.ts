/*
 * A browser at the platform over real HTTP, as far as the OIDC login tests need one: fetch with manual redirects and
 * the one cookie the platform sets for SSO (the browser binding), kept per Browser. The IdP step between authorize
 * and callback is each IdP's own (oidc-idp.ts, forging-idp.ts).
 */

/** A browser's cookie jar, as far as these tests need one: the SSO binding cookie the platform sets. */
export interface Browser {
  cookie?: string;
}

export const BINDING_COOKIE = 'analytics_sso_browser';

export interface Answer {
  status: number;
  location: string | null;
  body: any;
}

/** The platform's requests; `base()` is its base URL once it listens; `browser` is used unless a call names another. */
export function ssoBrowser(base: () => string, browser: Browser = {}) {
  async function http(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
    origin?: string,
    jar = browser,
  ): Promise<Answer> {
    const res = await fetch(new URL(path, base()), {
      method,
      redirect: 'manual',
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(origin ? { origin } : {}),
        ...(jar.cookie ? { cookie: jar.cookie } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const set = res.headers.getSetCookie().find((c) => c.startsWith(`${BINDING_COOKIE}=`));
    if (set) jar.cookie = set.split(';')[0];
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, location: res.headers.get('location'), body: json as any };
  }

  /** GET authorize: answers the IdP URL the browser is sent to. */
  async function authorize(providerId: number, redirectUri?: string, jar = browser): Promise<string> {
    const query = redirectUri ? `?redirectUri=${encodeURIComponent(redirectUri)}` : '';
    const res = await http('GET', `api/auth/sso/${providerId}/authorize${query}`, undefined, undefined, undefined, jar);
    if (res.status !== 302 || !res.location) throw new Error(`authorize: ${res.status} ${JSON.stringify(res.body)}`);
    return res.location;
  }

  /** The IdP's redirect back to the platform, followed: a 302 to the redirect URI with the one-time code, or a refusal. */
  const followCallback = (callback: string, jar = browser) =>
    http('GET', callback, undefined, undefined, undefined, jar);

  /** POST /api/auth/sso/exchange: the one-time code traded for the session, with the browser's binding cookie. */
  const exchange = (code: string, redirectUri?: string, origin?: string, jar = browser) =>
    http(
      'POST',
      'api/auth/sso/exchange',
      { code, ...(redirectUri ? { redirect_uri: redirectUri } : {}) },
      undefined,
      origin,
      jar,
    );

  return { browser, http, authorize, followCallback, exchange };
}
