import { authedProcedure, router } from '../trpc';
import { deletedOutput } from '../common';
import {
  buildHistory,
  cancelBuild,
  createRollup,
  getRollup,
  listBuilds,
  listRollups,
  removeRollup,
  replaceRollup,
  startBuild,
} from '../../server/rollups/rollups';
import { suggestRollups } from '../../server/rollups/suggest';
import { idInput } from '../common';
import {
  buildOutput,
  buildPage,
  buildRef,
  buildsPaged,
  createInput,
  historyPage,
  historyPaged,
  replaceInput,
  rollupList,
  rollupOutput,
  rollupRef,
  suggestOutput,
} from './schemas';

/*
 * Rollups of a dataset: small pre-aggregations built beside its extract and read instead of the source when a
 * request fits one (server/rollups; the matching is server/query/rollups). Outside the catalogue.
 */

const tags = ['Rollups'];

export const rollupRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dataset/{id}/rollups', summary: 'Rollups of the dataset', tags } })
    .input(idInput)
    .output(rollupList)
    .query(({ ctx, input }) => listRollups(ctx.deps, ctx.actor, input.id)),

  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dataset/{id}/rollups', summary: 'Define a rollup', tags } })
    .input(createInput)
    .output(rollupOutput)
    .mutation(({ ctx, input: { id, ...body } }) => createRollup(ctx.deps, ctx.actor, id, body)),

  suggest: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/rollups/suggest',
        summary: "Rollups that would answer the dataset's saved widgets",
        tags,
      },
    })
    .input(idInput)
    .output(suggestOutput)
    .mutation(({ ctx, input }) => suggestRollups(ctx.deps, ctx.actor, input.id)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dataset/{id}/rollups/{rollupId}', summary: 'A rollup', tags } })
    .input(rollupRef)
    .output(rollupOutput)
    .query(({ ctx, input }) => getRollup(ctx.deps, ctx.actor, input.id, input.rollupId)),

  replace: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/dataset/{id}/rollups/{rollupId}', summary: 'Change a rollup', tags },
    })
    .input(replaceInput)
    .output(rollupOutput)
    .mutation(({ ctx, input: { id, rollupId, ...body } }) => replaceRollup(ctx.deps, ctx.actor, id, rollupId, body)),

  delete: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/dataset/{id}/rollups/{rollupId}', summary: 'Delete a rollup', tags },
    })
    .input(rollupRef)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeRollup(ctx.deps, ctx.actor, input.id, input.rollupId)),

  build: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/rollups/{rollupId}/build',
        summary: 'Build the rollup now',
        tags,
      },
    })
    .input(rollupRef)
    .output(buildOutput)
    .mutation(({ ctx, input }) => startBuild(ctx.deps, ctx.actor, input.id, input.rollupId)),

  builds: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/rollups/{rollupId}/builds',
        summary: 'Builds of the rollup',
        tags,
      },
    })
    .input(buildsPaged)
    .output(buildPage)
    .query(({ ctx, input: { id, rollupId, ...page } }) => listBuilds(ctx.deps, ctx.actor, id, rollupId, page)),

  history: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/rollups/{rollupId}/builds/{buildId}/history',
        summary: 'Step and state log of a build',
        tags,
      },
    })
    .input(historyPaged)
    .output(historyPage)
    .query(({ ctx, input: { id, rollupId, buildId, ...page } }) =>
      buildHistory(ctx.deps, ctx.actor, id, rollupId, buildId, page),
    ),

  cancel: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/rollups/{rollupId}/builds/{buildId}/cancel',
        summary: 'Cancel a build',
        tags,
      },
    })
    .input(buildRef)
    .output(buildOutput)
    .mutation(({ ctx, input }) => cancelBuild(ctx.deps, ctx.actor, input.id, input.rollupId, input.buildId)),
});
