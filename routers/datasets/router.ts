import {
  copyDataset,
  createDataset,
  datasetDependencies,
  deleteDataset,
  getDataset,
  listDatasets,
  updateDataset,
} from '../../server/datasets/datasets';
import { validateFormula } from '../../server/datasets/formula-check';
import { suggestRelations } from '../../server/datasets/relation-suggest';
import { saveSchema, validateSchema } from '../../server/datasets/schema-store';
import { authedProcedure, router } from '../trpc';
import { deletedOutput, idInput } from '../common';
import { datasetDataProcedures } from './data-procedures';
import { datasetSecurityProcedures } from './security-procedures';
import { datasetExtractProcedures } from '../etl/router';
import {
  copyDatasetInput,
  createDatasetInput,
  datasetDetails,
  dependenciesOutput,
  listDatasetsInput,
  listDatasetsOutput,
  schemaInput,
  suggestRelationsInput,
  suggestRelationsOutput,
  updateDatasetInput,
  validateFormulaInput,
  validateFormulaOutput,
  validateSchemaOutput,
} from './schemas';

const tags = ['Datasets'];

export const datasetRouter = router({
  ...datasetDataProcedures,
  ...datasetSecurityProcedures,
  ...datasetExtractProcedures,
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dataset', summary: 'List datasets', tags } })
    .input(listDatasetsInput)
    .output(listDatasetsOutput)
    .query(({ ctx, input }) => listDatasets(ctx.deps.db, ctx.actor, input)),

  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dataset', summary: 'Create a dataset on sources', tags } })
    .input(createDatasetInput)
    .output(datasetDetails)
    .mutation(({ ctx, input }) => createDataset(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}',
        summary: 'Dataset with its whole schema',
        description:
          'A caller who may not edit the dataset does not see the fields its CLS rules hide from them (calculated ' +
          'fields reading them included), nor hierarchy levels, filters or sort_by_field_id naming them; masked ' +
          'fields are listed.',
        tags,
      },
    })
    .input(idInput)
    .output(datasetDetails)
    .query(({ ctx, input }) => getDataset(ctx.deps.db, ctx.actor, input.id)),

  update: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/dataset/{id}', summary: 'Change name, description, mode, sources', tags },
    })
    .input(updateDatasetInput)
    .output(datasetDetails)
    .mutation(({ ctx, input: { id, ...change } }) => updateDataset(ctx.deps, ctx.actor, id, change)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/dataset/{id}', summary: 'Delete a dataset', tags } })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDataset(ctx.deps, ctx.actor, input.id)),

  saveSchema: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/dataset/{id}/schema', summary: 'Replace the whole schema', tags } })
    .input(schemaInput)
    .output(datasetDetails)
    .mutation(({ ctx, input: { id, ...schema } }) => saveSchema(ctx.deps, ctx.actor, id, schema)),

  validateSchema: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/schema/validate',
        summary: 'Check a schema without saving it',
        tags,
      },
    })
    .input(schemaInput)
    .output(validateSchemaOutput)
    .mutation(({ ctx, input: { id, ...schema } }) => validateSchema(ctx.deps, ctx.actor, id, schema)),

  validateFormula: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/formula/validate',
        summary: 'Check a calculated field formula',
        tags,
      },
    })
    .input(validateFormulaInput)
    .output(validateFormulaOutput)
    .mutation(({ ctx, input: { id, ...formula } }) => validateFormula(ctx.deps, ctx.actor, id, formula)),

  suggestRelations: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dataset/{id}/relations/suggest',
        summary: 'Propose joins between dataset objects',
        tags,
      },
    })
    .input(suggestRelationsInput)
    .output(suggestRelationsOutput)
    .mutation(({ ctx, input: { id, ...request } }) => suggestRelations(ctx.deps, ctx.actor, id, request)),

  dependencies: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/dependencies',
        summary: 'Sources it uses, widgets and dashboards using it',
        tags,
      },
    })
    .input(idInput)
    .output(dependenciesOutput)
    .query(({ ctx, input }) => datasetDependencies(ctx.deps.db, ctx.actor, input.id)),

  copy: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dataset/{id}/copy', summary: 'Duplicate a dataset', tags } })
    .input(copyDatasetInput)
    .output(datasetDetails)
    .mutation(({ ctx, input: { id, ...target } }) => copyDataset(ctx.deps, ctx.actor, id, target)),
});
