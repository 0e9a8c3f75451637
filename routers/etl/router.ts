import { authedProcedure, router } from '../trpc';
import { getExtraction, updateExtraction } from '../../server/etl/settings';
import { cancelEtlJob, etlJobHistory, getEtlJob, listExtracts, startExtract } from '../../server/etl/runs';
import {
  datasetPaged,
  extractionInput,
  extractionOutput,
  historyPage,
  jobPaged,
  jobRef,
  runOutput,
  runPage,
  startInput,
} from './schemas';
import { idInput } from '../common';

/*
 * Extraction (ETL) of materialised datasets. The dataset's procedures (dataset.getExtraction, updateExtraction,
 * listExtracts, startExtract) are spread into the `dataset` router; the run's (etl.getJob, getHistory, cancel) form
 * the `etl` router.
 */

const datasetTags = ['Datasets'];
const etlTags = ['ETL runs'];

export const datasetExtractProcedures = {
  getExtraction: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dataset/{id}/extraction',
        summary: 'Extraction settings',
        tags: datasetTags,
      },
    })
    .input(idInput)
    .output(extractionOutput)
    .query(({ ctx, input }) => getExtraction(ctx.deps, ctx.actor, input.id)),

  updateExtraction: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/dataset/{id}/extraction',
        summary: 'Set extraction mode and refresh schedule',
        tags: datasetTags,
      },
    })
    .input(extractionInput)
    .output(extractionOutput)
    .mutation(({ ctx, input: { id, ...body } }) => updateExtraction(ctx.deps, ctx.actor, id, body)),

  listExtracts: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/datasets/{id}/extracts',
        summary: 'Extraction runs of the dataset',
        tags: datasetTags,
      },
    })
    .input(datasetPaged)
    .output(runPage)
    .query(({ ctx, input: { id, ...page } }) => listExtracts(ctx.deps, ctx.actor, id, page)),

  startExtract: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/datasets/{id}/extracts',
        summary: 'Start a synchronisation now',
        tags: datasetTags,
      },
    })
    .input(startInput)
    .output(runOutput)
    .mutation(({ ctx, input: { id, mode } }) => startExtract(ctx.deps, ctx.actor, id, { mode })),
};

export const etlRouter = router({
  getJob: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/etl-jobs/{jobId}', summary: 'State of an ETL run', tags: etlTags } })
    .input(jobRef)
    .output(runOutput)
    .query(({ ctx, input }) => getEtlJob(ctx.deps, ctx.actor, input.jobId)),

  getHistory: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/etl-jobs/{jobId}/history',
        summary: 'Step and state log of the run',
        tags: etlTags,
      },
    })
    .input(jobPaged)
    .output(historyPage)
    .query(({ ctx, input: { jobId, ...page } }) => etlJobHistory(ctx.deps, ctx.actor, jobId, page)),

  cancel: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/etl-jobs/{jobId}/cancel',
        summary: 'Cancel a running ETL run',
        tags: etlTags,
      },
    })
    .input(jobRef)
    .output(runOutput)
    .mutation(({ ctx, input }) => cancelEtlJob(ctx.deps, ctx.actor, input.jobId)),
});
