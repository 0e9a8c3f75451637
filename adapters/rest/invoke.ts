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
type Middleware = (opts: CallOpts & { next: (n?: NextOpts) => Promise<Result> }) => Promise<Result>;

async function step(middlewares: Middleware[], index: number, opts: CallOpts): Promise<Result> {
  try {
    return await middlewares[index]({
      ...opts,
      next: (n?: NextOpts) =>
        step(middlewares, index + 1, {
          ...opts,
          ctx: n?.ctx ? { ...opts.ctx, ...n.ctx } : opts.ctx,
          input: n && 'input' in n ? n.input : opts.input,
          getRawInput: n?.getRawInput ?? opts.getRawInput,
        }),
    });
  } catch (error) {
    return { ok: false, error };
  }
}

export async function invokeProcedure(
  def: { middlewares: unknown[]; meta?: unknown; type: string },
  path: string,
  ctx: object,
  input: unknown,
): Promise<unknown> {
  const result = await step(def.middlewares as Middleware[], 0, {
    ctx: ctx as Record<string, unknown>,
    input: undefined,
    getRawInput: async () => input,
    path,
    type: def.type,
    meta: def.meta,
    signal: undefined,
    batchIndex: 0,
  });
  if (!result.ok) throw result.error;
  return result.data;
}
