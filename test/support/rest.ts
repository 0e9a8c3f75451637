import type { FastifyInstance, InjectOptions } from 'fastify';
import type { z } from 'zod';
import type { ErrorEnvelope } from '../../adapters/rest/envelope';
import type { deletedOutput } from '../../routers/common';

export type { ErrorEnvelope };
export type ApiError = ErrorEnvelope['error'];
/** The answer of a DELETE of one object (`{ id, deleted: true }`). */
export type Deleted = z.output<typeof deletedOutput>;

/** The JSON body of every non-raw REST answer; `T` is the operation's output (`z.output` of its schema). */
export type Envelope<T> = { success: true; data: T } | ErrorEnvelope;

/**
 * One REST answer. `B` is the whole body: `Envelope<T>` for a typed read, `string` for raw (CSV, text) answers; it
 * stays loose by default because most tests read it with `toMatchObject` rather than field by field.
 */
export interface RestResponse<B = any> {
  status: number;
  body: B;
  headers: Record<string, unknown>;
}

/**
 * The `data` of a 200 success envelope, typed as the operation's output (`ok<z.output<typeof schema>>(res)`); anything
 * else fails the test with the body. Without a type argument the data is `unknown`: good only for a call made for its
 * effect.
 */
export function ok<T = unknown>(res: RestResponse): T {
  const body = res.body as Envelope<T> | undefined;
  if (res.status !== 200 || body?.success !== true)
    throw new Error(`expected 200, got ${res.status}: ${JSON.stringify(res.body)}`);
  return body.data;
}

/** The `error` of an error envelope; a success or a body without one fails the test with the body. */
export function failure(res: RestResponse): ApiError {
  const body = res.body as Envelope<unknown> | undefined;
  if (body?.success !== false || !body.error)
    throw new Error(`expected an error envelope, got ${res.status}: ${JSON.stringify(res.body)}`);
  return body.error;
}

/**
 * REST calls through fastify.inject on the exact paths, with an optional bearer token. A test app checks every
 * answer against its served OpenAPI document (openapi-validation.ts): a mismatch rejects the call.
 */
export function rest(app: FastifyInstance | (() => FastifyInstance)) {
  // A getter lets a file build its client before the app starts (see useTestApp).
  const appOf = typeof app === 'function' ? app : () => app;
  const call = async (
    method: InjectOptions['method'],
    url: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; query?: Record<string, string> } = {},
  ): Promise<RestResponse> => {
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
