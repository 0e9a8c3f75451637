import type { Rest, RestResponse } from './rest';

/**
 * The same REST client as rest() (test/support/rest.ts), over real HTTP to a running server (a cluster node, the load
 * balancer in front of them): the factories and area helpers that take a `Rest` work unchanged. A FormData body goes
 * as multipart, anything else as JSON.
 */
export function httpRest(baseUrl: string | (() => string)): Rest {
  const base = typeof baseUrl === 'function' ? baseUrl : () => baseUrl;
  const call = async (
    method: string,
    url: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; query?: Record<string, string> } = {},
  ): Promise<RestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: FormData | string | undefined;
    if (opts.body instanceof FormData || typeof opts.body === 'string') body = opts.body;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const target = new URL(url, base());
    for (const [k, v] of Object.entries(opts.query ?? {})) target.searchParams.set(k, v);
    const res = await fetch(target, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* raw responses stay text */
    }
    return { status: res.status, body: parsed as any, headers: Object.fromEntries(res.headers) };
  };
  return {
    get: (url: string, token?: string, query?: Record<string, string>) => call('GET', url, { token, query }),
    post: (url: string, body?: unknown, token?: string) => call('POST', url, { body, token }),
    put: (url: string, body?: unknown, token?: string) => call('PUT', url, { body, token }),
    delete: (url: string, token?: string) => call('DELETE', url, { token }),
    call: call as Rest['call'],
  };
}
