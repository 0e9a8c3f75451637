import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/*
 * A real OpenID Connect provider (the oidc-provider package) on a random loopback port: one confidential test client,
 * a few accounts with a groups claim, and its development login and consent forms, driven over HTTP by `idpLogin`.
 */

export interface IdpAccount {
  sub: string;
  preferred_username: string;
  email?: string;
  name?: string;
  groups?: string[];
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, IdpAccount>;
  close(): Promise<void>;
}

/** `redirectUris` is asked once the issuer address is known (the platform's providers are made with it). */
export async function startTestIdp(redirectUris: (issuer: string) => Promise<string[]>): Promise<TestIdp> {
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: TestIdp = {
    issuer,
    clientId: 'analytics-platform',
    clientSecret: 'test-client-secret-0123456789',
    accounts: new Map(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        redirect_uris: await redirectUris(issuer),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email'],
      groups: ['groups'],
    },
    scopes: ['openid', 'profile', 'email', 'groups'],
    cookies: { keys: ['test-cookie-key-0123456789'] },
    pkce: { required: () => true },
    async findAccount(_ctx: unknown, sub: string) {
      const account = idp.accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  });
  handler = provider.callback();
  return idp;
}

/** A browser's cookie jar for one host: enough for the IdP's session and interaction cookies. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * A browser at the IdP: from the authorization URL through the development login form (as `accountId`) and the
 * consent form until the IdP redirects away from itself; answers that redirect (the platform's callback URL).
 */
export async function idpLogin(idp: TestIdp, authorizationUrl: string, accountId: string): Promise<string> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
    });
    jar.take(res);
    form = undefined;
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url).toString();
      if (!next.startsWith(idp.issuer)) return next;
      url = next;
      await res.arrayBuffer();
      continue;
    }
    const page = await res.text();
    if (res.status !== 200) throw new Error(`IdP answered ${res.status} at ${url}: ${page.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form at ${url}: ${page.slice(0, 500)}`);
    url = new URL(action, url).toString();
    form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', accountId);
      form.set('password', 'any');
    }
  }
  throw new Error('the IdP did not redirect back within 20 steps');
}
