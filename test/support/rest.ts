import type { FastifyInstance, InjectOptions } from 'fastify';

export interface RestResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

/** REST calls through fastify.inject on the exact paths, with an optional bearer token. */
export function rest(app: FastifyInstance | (() => FastifyInstance)) {
  // A getter lets a file build its client before the app starts (see useTestApp).
  const appOf = typeof app === 'function' ? app : () => app;
  const call = async (method: InjectOptions['method'], url: string, opts: { token?: string; body?: unknown; headers?: Record<string, string>; query?: Record<string, string> } = {}): Promise<RestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const res = await appOf().inject({
      method,
      url,
      headers,
      query: opts.query,
      ...(opts.body !== undefined ? { payload: opts.body as InjectOptions['payload'] } : {}),
    });
    let body: unknown = res.body;
    try {
      body = res.json();
    } catch {
      /* raw responses stay text */
    }
    return { status: res.statusCode, body: body as any, headers: res.headers };
  };
  return {
    get: (url: string, token?: string, query?: Record<string, string>) => call('GET', url, { token, query }),
    post: (url: string, body?: unknown, token?: string) => call('POST', url, { body, token }),
    put: (url: string, body?: unknown, token?: string) => call('PUT', url, { body, token }),
    delete: (url: string, token?: string) => call('DELETE', url, { token }),
    call,
  };
}

export type Rest = ReturnType<typeof rest>;
