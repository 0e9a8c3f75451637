import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * Response headers the domain code of a REST operation adds to its answer without knowing about HTTP: the REST
 * adapter runs an operation that declares response headers (meta.openapi.responseHeaders) inside a scope, domain code
 * notes values there (X-Data-Path: which path answered a widget's data), and the adapter sends the declared ones.
 * Outside such a scope (tRPC, jobs, tests calling domain functions) a note is dropped.
 */

const scope = new AsyncLocalStorage<Map<string, string[]>>();

/** Adds a value to a header of the answer under way; values are distinct, in the order first noted. */
export function noteReplyHeader(name: string, value: string): void {
  const headers = scope.getStore();
  if (!headers) return;
  const key = name.toLowerCase();
  const values = headers.get(key);
  if (!values) headers.set(key, [value]);
  else if (!values.includes(value)) values.push(value);
}

/** Runs `fn` in a scope collecting noted headers; `send` gets each of `names` that was noted (values joined by ','). */
export async function withReplyHeaders<T>(
  names: readonly string[],
  fn: () => Promise<T>,
  send: (name: string, value: string) => void,
): Promise<T> {
  const headers = new Map<string, string[]>();
  try {
    return await scope.run(headers, fn);
  } finally {
    for (const name of names) {
      const values = headers.get(name.toLowerCase());
      if (values?.length) send(name, values.join(','));
    }
  }
}
