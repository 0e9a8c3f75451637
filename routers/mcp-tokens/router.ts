import { z } from 'zod';
import {
  activateApiToken,
  createApiToken,
  getApiTokenSettings,
  listApiTokens,
  revokeApiToken,
  suspendApiToken,
  updateApiTokenSettings,
} from '../../server/mcp-tokens/mcp-tokens';
import { authedProcedure, router, sysadminProcedure } from '../trpc';
import { idInput } from '../common';
import {
  createTokenInput,
  createTokenOutput,
  listTokensInput,
  listTokensOutput,
  tokenSettings,
  tokenView,
} from './schemas';

const tags = ['API tokens'];

export const mcpTokenRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/mcp-tokens', summary: 'List own API tokens', tags } })
    .input(listTokensInput)
    .output(listTokensOutput)
    .query(({ ctx, input }) => listApiTokens(ctx.deps, ctx.actor, input)),

  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/mcp-tokens',
        summary: 'Issue an API token (the string is shown once)',
        tags,
      },
    })
    .input(createTokenInput)
    .output(createTokenOutput)
    .mutation(({ ctx, input }) => createApiToken(ctx.deps, ctx.actor, input)),

  revoke: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/mcp-tokens/{id}', summary: 'Revoke an API token', tags } })
    .input(idInput)
    .output(tokenView)
    .mutation(({ ctx, input }) => revokeApiToken(ctx.deps, ctx.actor, input.id)),

  suspend: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/mcp-tokens/{id}/suspend', summary: 'Suspend an API token', tags } })
    .input(idInput)
    .output(tokenView)
    .mutation(({ ctx, input }) => suspendApiToken(ctx.deps, ctx.actor, input.id)),

  activate: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/mcp-tokens/{id}/activate', summary: 'Resume a suspended API token', tags },
    })
    .input(idInput)
    .output(tokenView)
    .mutation(({ ctx, input }) => activateApiToken(ctx.deps, ctx.actor, input.id)),

  getSettings: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/mcp-tokens/settings', summary: 'Token issue switch and conditions', tags },
    })
    .input(z.void())
    .output(tokenSettings)
    .query(({ ctx }) => getApiTokenSettings(ctx.deps)),

  updateSettings: sysadminProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/mcp-tokens/settings', summary: 'Turn token issue and use on or off', tags },
    })
    .input(tokenSettings)
    .output(tokenSettings)
    .mutation(({ ctx, input }) => updateApiTokenSettings(ctx.deps, input)),
});
