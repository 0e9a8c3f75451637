import { authedProcedure, router } from '../trpc';
import { getExport, startExport } from '../../server/file-export/file-export';
import { exportLimits, updateExportLimits } from '../../server/file-export/limits';
import {
  exportJobOutput,
  exportJobRef,
  exportLimitsInput,
  exportLimitsOutput,
  startExportInput,
  startExportOutput,
} from './schemas';

/* File export: jobs (POST /api/exports, GET /api/exports/{jobId}) and limits. The file itself is a raw route (raw.ts). */

const tags = ['File export'];

export const fileExportRouter = router({
  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/exports', summary: 'Start an export job', tags } })
    .input(startExportInput)
    .output(startExportOutput)
    .mutation(({ ctx, input }) => startExport(ctx.deps, ctx.actor, input)),

  getLimits: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/exports/limits', summary: 'Export limits', tags } })
    .output(exportLimitsOutput)
    .query(({ ctx }) => exportLimits(ctx.deps)),

  updateLimits: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/exports/limits', summary: 'Change export limits', tags } })
    .input(exportLimitsInput)
    .output(exportLimitsOutput)
    .mutation(({ ctx, input }) => updateExportLimits(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/exports/{jobId}', summary: 'State of an export job', tags } })
    .input(exportJobRef)
    .output(exportJobOutput)
    .query(({ ctx, input }) => getExport(ctx.deps, ctx.actor, input.jobId)),
});
