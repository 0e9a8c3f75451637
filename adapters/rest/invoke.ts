/**
 * Runs a tRPC procedure's own middleware chain (auth, input parser, output parser, resolver) for the REST adapter.
 *
 * Why not `procedure(opts)` or createCaller: tRPC's chain copies its options and context with a transpiled
 * object-spread helper at every step, which cost ~14 µs of a ~16 µs procedure call here (scripts/bench/rest-overhead.ts).
 * This walks the same `_def.middlewares` with the same semantics (context merged by `next({ctx})`, input replaced
 * by `next({input})`, a thrown error becomes a failed result) using native spreads. The middlewares themselves,
 * and so every access check, are the procedure's own.
 */
type Result = { ok: true; data: unknown; ctx?: unknown } | { ok: false; error: unknown };
type NextOpts = { ctx?: Record<string, unknown>; input?: unknown; getRawInput?: () => Promise<unknown> } | undefined;
interface CallOpts {
  ctx: Record<string, unknown>;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  path: string;
  type: string;
  meta: unknown;
  signal: undefined;
  batchIndex: number;
}
type Middleware = ((opts: CallOpts & { next: (n?: NextOpts) => Promise<Result> }) => Promise<Result>) & {
  _type?: string;
};

/**
 * An input remembered for this request (adapters/rest/input-memo.ts): `known` stands for what the procedure's input
 * parser would return (the parser does not run), `remember` is handed what it returned.
 */
export type InputMemoStep = { known: unknown } | { remember: (input: unknown) => void };

async function step(
  middlewares: Middleware[],
  index: number,
  opts: CallOpts,
  memo: InputMemoStep | undefined,
): Promise<Result> {
  const next = (n?: NextOpts) =>
    step(
      middlewares,
      index + 1,
      {
        ...opts,
        ctx: n?.ctx ? { ...opts.ctx, ...n.ctx } : opts.ctx,
        input: n && 'input' in n ? n.input : opts.input,
        getRawInput: n?.getRawInput ?? opts.getRawInput,
      },
      memo,
    );
  try {
    const middleware = middlewares[index];
    if (memo && middleware._type === 'input') {
      // The procedure has this one input step (checked by memoizableInput), so its input is the parser's output.
      if ('known' in memo) return await next({ input: memo.known });
      const remember = memo.remember;
      return await middleware({
        ...opts,
        next: (n) => {
          if (n && 'input' in n) remember(n.input);
          return next(n);
        },
      });
    }
    return await middleware({ ...opts, next });
  } catch (error) {
    return { ok: false, error };
  }
}

/** Whether the REST adapter may remember the procedure's inputs: it must have exactly one input parser. */
export function memoizableInput(def: { middlewares: unknown[] }): boolean {
  return (def.middlewares as Middleware[]).filter((m) => m._type === 'input').length === 1;
}

export async function invokeProcedure(
  def: { middlewares: unknown[]; meta?: unknown; type: string },
  path: string,
  ctx: object,
  input: unknown,
  memo?: InputMemoStep,
): Promise<unknown> {
  const result = await step(
    def.middlewares as Middleware[],
    0,
    {
      ctx: ctx as Record<string, unknown>,
      input: undefined,
      getRawInput: async () => input,
      path,
      type: def.type,
      meta: def.meta,
      signal: undefined,
      batchIndex: 0,
    },
    memo,
  );
  if (!result.ok) throw result.error;
  return result.data;
}
