import type { OpenApiMeta } from 'trpc-to-openapi';
import { authedProcedure, router } from '../trpc';
import {
  changeMailing,
  createMailing,
  estimateSlices,
  getMailing,
  getRun,
  listLetters,
  listMailings,
  listRuns,
  pauseMailing,
  removeMailing,
  resumeMailing,
  runMailingNow,
  sendTestLetter,
} from '../../server/mailings/mailings';
import { deletedOutput, idInput } from '../common';
import {
  estimateInput,
  estimateOutput,
  letterPage,
  lettersInput,
  listInput,
  mailingInput,
  mailingOutput,
  mailingPage,
  mailingUpdate,
  runOutput,
  runPage,
  runRef,
  runsInput,
  runStarted,
  testInput,
  testOutput,
} from './schemas';

/* Mailings: /api/mailings. */

const tags = ['Mailings'];
const op = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: `/${string}`, summary: string): OpenApiMeta => ({
  openapi: { method, path, summary, tags },
});

export const mailingRouter = router({
  list: authedProcedure
    .meta(op('GET', '/api/mailings', 'List mailings'))
    .input(listInput)
    .output(mailingPage)
    .query(({ ctx, input }) => listMailings(ctx.deps, ctx.actor, input)),

  create: authedProcedure
    .meta(op('POST', '/api/mailings', 'Create a mailing'))
    .input(mailingInput)
    .output(mailingOutput)
    .mutation(({ ctx, input }) => createMailing(ctx.deps, ctx.actor, input)),

  estimateSlices: authedProcedure
    .meta(op('POST', '/api/mailings/slice-estimate', 'Estimate slices and letters before saving'))
    .input(estimateInput)
    .output(estimateOutput)
    .mutation(({ ctx, input }) => estimateSlices(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta(op('GET', '/api/mailings/{id}', 'Mailing details'))
    .input(idInput)
    .output(mailingOutput)
    .query(({ ctx, input }) => getMailing(ctx.deps, ctx.actor, input.id)),

  update: authedProcedure
    .meta(op('PUT', '/api/mailings/{id}', 'Change a mailing'))
    .input(mailingUpdate)
    .output(mailingOutput)
    .mutation(({ ctx, input: { id, ...body } }) => changeMailing(ctx.deps, ctx.actor, id, body)),

  delete: authedProcedure
    .meta(op('DELETE', '/api/mailings/{id}', 'Delete a mailing'))
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeMailing(ctx.deps, ctx.actor, input.id)),

  pause: authedProcedure
    .meta(op('POST', '/api/mailings/{id}/pause', 'Pause the schedule'))
    .input(idInput)
    .output(mailingOutput)
    .mutation(({ ctx, input }) => pauseMailing(ctx.deps, ctx.actor, input.id)),

  resume: authedProcedure
    .meta(op('POST', '/api/mailings/{id}/resume', 'Resume a paused schedule'))
    .input(idInput)
    .output(mailingOutput)
    .mutation(({ ctx, input }) => resumeMailing(ctx.deps, ctx.actor, input.id)),

  run: authedProcedure
    .meta(op('POST', '/api/mailings/{id}/run', 'Run the mailing now'))
    .input(idInput)
    .output(runStarted)
    .mutation(({ ctx, input }) => runMailingNow(ctx.deps, ctx.actor, input.id)),

  sendTest: authedProcedure
    .meta(op('POST', '/api/mailings/{id}/test', 'Send one test letter'))
    .input(testInput)
    .output(testOutput)
    .mutation(({ ctx, input }) => sendTestLetter(ctx.deps, ctx.actor, input.id, input.emails)),

  listRuns: authedProcedure
    .meta(op('GET', '/api/mailings/{id}/runs', 'Run history'))
    .input(runsInput)
    .output(runPage)
    .query(({ ctx, input: { id, ...rest } }) => listRuns(ctx.deps, ctx.actor, id, rest)),

  getRun: authedProcedure
    .meta(op('GET', '/api/mailings/{id}/runs/{runId}', 'One run'))
    .input(runRef)
    .output(runOutput)
    .query(({ ctx, input }) => getRun(ctx.deps, ctx.actor, input.id, input.runId)),

  listLetters: authedProcedure
    .meta(op('GET', '/api/mailings/{id}/runs/{runId}/letters', 'Letters of a run'))
    .input(lettersInput)
    .output(letterPage)
    .query(({ ctx, input: { id, runId, ...page } }) => listLetters(ctx.deps, ctx.actor, id, runId, page)),
});
