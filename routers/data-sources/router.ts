import { checkSavedSource, checkSettings } from '../../server/data-sources/check';
import {
  copyDataSource,
  createDataSource,
  deleteDataSource,
  getDataSource,
  listDataSources,
  updateDataSource,
} from '../../server/data-sources/data-sources';
import { deleteFileSource } from '../../server/data-sources/files';
import { authedProcedure, router } from '../trpc';
import { deletedOutput, idInput } from '../common';
import { browseProcedures } from './browse-procedures';
import { consoleProcedures } from './console-procedures';
import {
  checkInput,
  checkOutput,
  checkSavedInput,
  copyInput,
  createDataSourceInput,
  dataSourceView,
  listDataSourcesInput,
  listDataSourcesOutput,
  updateDataSourceInput,
} from './schemas';

const tags = ['Sources'];

export const dataSourceRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/data-source', summary: 'List data sources', tags } })
    .input(listDataSourcesInput)
    .output(listDataSourcesOutput)
    .query(({ ctx, input }) => listDataSources(ctx.deps, ctx.actor, input)),

  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/data-source', summary: 'Create a data source', tags } })
    .input(createDataSourceInput)
    .output(dataSourceView)
    .mutation(({ ctx, input }) => createDataSource(ctx.deps, ctx.actor, input)),

  check: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/check',
        summary: 'Check connection settings before saving',
        description:
          'Nothing is saved. A source that cannot be reached answers 200 with ok: false and the driver error text.',
        tags,
      },
    })
    .input(checkInput)
    .output(checkOutput)
    .mutation(({ ctx, input }) => checkSettings(ctx.deps, input)),

  get: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/data-source/{id}', summary: 'Source details, secrets masked', tags },
    })
    .input(idInput)
    .output(dataSourceView)
    .query(({ ctx, input }) => getDataSource(ctx.deps, ctx.actor, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/data-source/{id}', summary: 'Change name and settings', tags } })
    .input(updateDataSourceInput)
    .output(dataSourceView)
    .mutation(({ ctx, input: { id, ...change } }) => updateDataSource(ctx.deps, ctx.actor, id, change)),

  delete: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/data-source/{id}',
        summary: 'Delete a source (400 while datasets depend on it)',
        tags,
      },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDataSource(ctx.deps, ctx.actor, input.id)),

  checkSaved: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/data-source/{id}/check', summary: 'Check the saved connection', tags },
    })
    .input(checkSavedInput)
    .output(checkOutput)
    .mutation(({ ctx, input }) => checkSavedSource(ctx.deps, ctx.actor, input.id, input.settings)),

  copy: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/copy',
        summary: 'Duplicate a source with its settings',
        tags,
      },
    })
    .input(copyInput)
    .output(dataSourceView)
    .mutation(({ ctx, input: { id, ...target } }) => copyDataSource(ctx.deps, ctx.actor, id, target)),

  // Uploads and replacements of files are multipart raw routes (raw.ts); the delete takes no file.
  deleteFile: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/files/{id}',
        operationId: 'file-delete',
        summary: 'Delete a file source and its stored file',
        description: '400 while datasets depend on it.',
        successDescription: 'Deleted',
        tags: ['Files'],
      },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteFileSource(ctx.deps, ctx.actor, input.id)),

  ...browseProcedures,
  ...consoleProcedures,
});
