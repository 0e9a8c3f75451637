import { z } from 'zod';
import { checkAiProvider, getAiProvider, updateAiProvider } from '../../server/ai/ai';
import { sysadminProcedure } from '../trpc';
import { aiProviderView, checkAiProviderInput, checkOutput, updateAiProviderInput } from './schemas';

const tags = ['Administration'];

/** admin.getAiProvider, admin.updateAiProvider, admin.checkAiProvider (/api/admin/ai-provider): spread into the admin router. */
export const aiAdminProcedures = {
  getAiProvider: sysadminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/admin/ai-provider', summary: 'AI provider settings', tags } })
    .input(z.void())
    .output(aiProviderView)
    .query(({ ctx }) => getAiProvider(ctx.deps)),

  updateAiProvider: sysadminProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/admin/ai-provider', summary: 'Set the AI provider', tags } })
    .input(updateAiProviderInput)
    .output(aiProviderView)
    .mutation(({ ctx, input }) => updateAiProvider(ctx.deps, input)),

  checkAiProvider: sysadminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/admin/ai-provider/check',
        summary: 'Test the AI provider connection',
        tags,
      },
    })
    .input(checkAiProviderInput)
    .output(checkOutput)
    .mutation(({ ctx, input }) => checkAiProvider(ctx.deps, input ?? {})),
};
