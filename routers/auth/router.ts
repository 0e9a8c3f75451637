import { z } from 'zod';
import { login, logout, refresh } from '../../server/auth/login';
import { authedProcedure, publicProcedure, router } from '../trpc';
import { loginInput, loginOutput, logoutOutput, refreshInput } from './schemas';

const tags = ['Login and providers'];

export const authRouter = router({
  login: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/login',
        summary: 'Log in with username and password',
        tags,
        protect: false,
      },
    })
    .input(loginInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => login(ctx.deps, input, ctx.ip)),

  refresh: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/auth/refresh', summary: 'Renew the session', tags, protect: false },
    })
    .input(refreshInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => refresh(ctx.deps, input.refresh_token, ctx.log)),

  logout: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/auth/logout',
        summary: 'Log out everywhere: revoke all refresh tokens',
        tags,
      },
    })
    .input(z.void())
    .output(logoutOutput)
    .mutation(async ({ ctx }) => {
      await logout(ctx.deps, ctx.actor.userId);
      return { revoked: true };
    }),
});
