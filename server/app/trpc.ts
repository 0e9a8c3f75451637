import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Actor } from '../auth/actor';
import { authenticate } from '../auth/authenticate';
import type { Context } from './context';
import { describeError } from '../kernel/error-response';
import { AppError } from '../kernel/errors';

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
