import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Actor } from '../server/auth/actor';
import { authenticate } from '../server/auth/authenticate';
import type { Context } from './context';
import { describeError } from '../server/kernel/error-response';
import { AppError } from '../server/kernel/errors';
import { assertFeatureEnabled, type Feature } from '../server/service/installation';

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    transformer: superjson,
    isDev: false,
    errorFormatter({ shape, error }) {
      const d = describeError(error);
      return { ...shape, message: d.message, data: { code: shape.data.code, httpStatus: d.status, errors: d.errors } };
    },
  });

export const router = t.router;
export const publicProcedure = t.procedure;

/** Resolves the bearer token before the input is parsed: no token is a 401 even when the body is also wrong. */
export const authedProcedure = t.procedure.use(async ({ ctx, next }) => {
  const actor = await authenticate(ctx.deps, ctx.authorization);
  return next({ ctx: { ...ctx, actor } as Context & { actor: Actor } });
});

export const sysadminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (!ctx.actor.isSysadmin) throw new AppError('forbidden');
  return next();
});

/** Procedures of an area a system administrator can switch off (features of PUT /api/settings): off, they answer 403. */
const feature = (name: Feature) =>
  t.middleware(
    // Marked so that the OpenAPI builder, which tells public from protected procedures by their middlewares
    // (adapters/rest/openapi-finish.ts), does not count a feature switch as authentication or as a role gate.
    Object.assign(
      async ({ ctx, next }: { ctx: Context; next: () => Promise<unknown> }) => {
        await assertFeatureEnabled(ctx.deps, name);
        return next();
      },
      { featureSwitch: true },
    ) as Parameters<typeof t.middleware>[0],
  );

/** /api/pipeline...: after authentication (401 first), the pipelines switch. */
export const pipelineProcedure = authedProcedure.use(feature('pipelines'));
/** Share-link management under /api/dashboard/{id}/share-links. */
export const shareLinkProcedure = authedProcedure.use(feature('public_links'));
/** The public viewer /api/public/link/{token}/...: no token, the public links switch. */
export const publicLinkProcedure = publicProcedure.use(feature('public_links'));

/**
 * The procedure's REST route (adapters/rest) does not parse its answer again with the output schema; /trpc still
 * does. Only for answers the domain code builds key by key in the documented shape, with nothing to strip or
 * transform: widget data, whose output parse copied every row object (a z.record per row) on every read, a
 * measurable share of a cached read's CPU (bench:load). The schema stays the procedure's, so the OpenAPI document
 * is unchanged, and every REST answer in the tests is still checked against that document.
 */
export function restSkipsOutputParse<P extends object>(procedure: P): P {
  const p = procedure as unknown as { _def: { middlewares: { _type?: string }[] } };
  // A copy of _def: the REST adapter and the OpenAPI builder read `procedure._def` (the same schemas and meta), while
  // the /trpc caller runs the chain of the _def it closed over when the procedure was built, output parser included.
  p._def = { ...p._def, middlewares: p._def.middlewares.filter((m) => m._type !== 'output') };
  return procedure;
}

/**
 * The procedure's REST route parses an identical request (the same URL and body text) once: later ones get the same
 * input, frozen, without JSON.parse or the input schema (adapters/rest/input-memo.ts). For operations whose callers
 * repeat one body many times and whose code treats its input as read-only: widget data, which a dashboard sends for
 * every viewer and refresh. The chain still runs (authentication, every access check); /trpc is unchanged.
 */
export function restMemoizesInput<P extends object>(procedure: P): P {
  const p = procedure as unknown as { _def: Record<string, unknown> };
  // A copy of _def, as in restSkipsOutputParse: only the REST adapter reads the mark.
  p._def = { ...p._def, restInputMemo: true };
  return procedure;
}
