import { z } from 'zod';
import { getSourceType, listSourceTypes, updateSourceType } from '../../server/admin/source-types';
import { authedProcedure, router, sysadminProcedure } from '../trpc';
import { listSourceTypesOutput, sourceTypeDetails, sourceTypeInput, updateSourceTypeInput } from './schemas';
import { aiAdminProcedures } from './ai-provider-procedures';
import { driverProcedures } from './driver-procedures';

const tags = ['Administration'];

export const adminRouter = router({
  listSourceTypes: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/source-types',
        summary: 'Source kinds available on the installation',
        tags,
      },
    })
    .input(z.void())
    .output(listSourceTypesOutput)
    .query(({ ctx }) => listSourceTypes(ctx.deps)),

  getSourceType: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/source-types/{type}', summary: 'Settings form of one source kind', tags },
    })
    .input(sourceTypeInput)
    .output(sourceTypeDetails)
    .query(({ ctx, input }) => getSourceType(ctx.deps, input.type)),

  updateSourceType: sysadminProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/source-types/{type}', summary: 'Enable a kind or pick its driver', tags },
    })
    .input(updateSourceTypeInput)
    .output(sourceTypeDetails)
    .mutation(({ ctx, input: { type, ...change } }) => updateSourceType(ctx.deps, type, change)),

  // GET and DELETE /api/admin/drivers (the upload is a raw route: raw.ts) and /api/admin/ai-provider.
  ...driverProcedures,
  ...aiAdminProcedures,
});
