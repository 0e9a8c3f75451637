import { columnValues, listSourceObjects, previewTable } from '../../server/data-sources/browse';
import { listColumns, listSchemas, listTables } from '../../server/data-sources/metadata';
import { refreshMetadataAndFieldTypes } from '../../server/datasets/field-types';
import { authedProcedure } from '../trpc';
import { idInput } from '../common';
import {
  columnValuesInput,
  columnValuesOutput,
  listColumnsInput,
  listColumnsOutput,
  listObjectsOutput,
  listSchemasOutput,
  listTablesInput,
  listTablesOutput,
  previewInput,
  previewOutput,
  refreshMetadataOutput,
} from './schemas';

const tags = ['Sources'];

const RAW_READ =
  'Reads the table as it is, outside any dataset (no RLS or CLS applies), so it needs the right to edit the source: ' +
  'Редактор or Администратор of its workspace, the edit right on it, or a system administrator (else 403).';

const RAW_METADATA =
  "Describes the source as it is, outside any dataset (a column a dataset's CLS rule hides is listed too), so it " +
  'needs the right to edit the source: Редактор or Администратор of its workspace, the edit right on it, or a ' +
  'system administrator (else 403); a reader reads through datasets.';

/** Metadata (from the cache), platform objects on the source, and reads of its data. */
export const browseProcedures = {
  listSchemas: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/schemas',
        summary: 'List database schemas',
        description: `From the metadata cache. ${RAW_METADATA}`,
        tags,
      },
    })
    .input(idInput)
    .output(listSchemasOutput)
    .query(({ ctx, input }) => listSchemas(ctx.deps, ctx.actor, input.id)),

  listTables: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/tables',
        summary: 'List tables and views of a schema',
        description: `Optionally searched by name. ${RAW_METADATA}`,
        tags,
      },
    })
    .input(listTablesInput)
    .output(listTablesOutput)
    .query(({ ctx, input: { id, ...filter } }) => listTables(ctx.deps, ctx.actor, id, filter)),

  listColumns: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/columns',
        summary: 'List columns of a table',
        description: `Name, database type, primitive type and nullability of each column. ${RAW_METADATA}`,
        tags,
      },
    })
    .input(listColumnsInput)
    .output(listColumnsOutput)
    .query(({ ctx, input: { id, ...table } }) => listColumns(ctx.deps, ctx.actor, id, table)),

  refreshMetadata: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/metadata/refresh',
        summary: 'Re-read schemas, tables and columns',
        tags,
      },
    })
    .input(idInput)
    .output(refreshMetadataOutput)
    .mutation(({ ctx, input }) => refreshMetadataAndFieldTypes(ctx.deps, ctx.actor, input.id)),

  listObjects: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/objects',
        summary: 'Platform objects built on the source',
        tags,
      },
    })
    .input(idInput)
    .output(listObjectsOutput)
    .query(({ ctx, input }) => listSourceObjects(ctx.deps, ctx.actor, input.id)),

  preview: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/preview',
        summary: 'First rows of a table',
        description: RAW_READ,
        tags,
      },
    })
    .input(previewInput)
    .output(previewOutput)
    .mutation(({ ctx, input: { id, ...table } }) => previewTable(ctx.deps, ctx.actor, id, table)),

  columnValues: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/column-values',
        summary: 'Distinct values of one column',
        description: RAW_READ,
        tags,
      },
    })
    .input(columnValuesInput)
    .output(columnValuesOutput)
    .query(({ ctx, input: { id, ...column } }) => columnValues(ctx.deps, ctx.actor, id, column)),
};
