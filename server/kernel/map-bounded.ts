/**
 * `fn` over every item, at most `limit` at a time, results in the items' order. A failure of one item is the
 * caller's to catch inside `fn` (a rejected `fn` rejects the whole run, as Promise.all would).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * A limit on tasks running at once, shared by whoever holds it: `limit(task)` runs the task when fewer than `n`
 * run, else when one ends (first come, first served). A task's failure is its caller's.
 */
export function createLimiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A slot is handed straight to the next waiter, so none is taken twice between an end and a wake-up.
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
