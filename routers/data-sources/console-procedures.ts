import { listAccessLog } from '../../server/data-sources/access-log';
import { cancelQuery, getQuery, listQueries, runQuery, validateSql } from '../../server/data-sources/sql-console';
import { authedProcedure } from '../trpc';
import {
  accessLogInput,
  accessLogOutput,
  getQueryInput,
  listQueriesInput,
  listQueriesOutput,
  queryIdInput,
  queryView,
  runQueryInput,
  validateSqlInput,
  validateSqlOutput,
} from './schemas';

const tags = ['Sources'];

/** The SQL console (owners only) and the access log. */
export const consoleProcedures = {
  listQueries: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/queries',
        summary: 'History of SQL queries on the source',
        tags,
      },
    })
    .input(listQueriesInput)
    .output(listQueriesOutput)
    .query(({ ctx, input: { id, ...page } }) => listQueries(ctx.deps, ctx.actor, id, page)),

  runQuery: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/queries',
        summary: 'Run an SQL query',
        description:
          'Answers within about a second: state finished with the first result page inline, or state running with the ' +
          'query_id to poll (GET .../queries/{queryId}). An SQL error reported in that time is a 400 with the driver message.',
        tags,
      },
    })
    .input(runQueryInput)
    .output(queryView)
    .mutation(({ ctx, input: { id, ...query } }) => runQuery(ctx.deps, ctx.actor, id, query)),

  getQuery: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/queries/{queryId}',
        summary: 'State and result page of a query',
        tags,
      },
    })
    .input(getQueryInput)
    .output(queryView)
    .query(({ ctx, input: { id, queryId, ...page } }) => getQuery(ctx.deps, ctx.actor, id, queryId, page)),

  cancelQuery: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/queries/{queryId}/cancel',
        summary: 'Cancel a running query',
        tags,
      },
    })
    .input(queryIdInput)
    .output(queryView)
    .mutation(({ ctx, input }) => cancelQuery(ctx.deps, ctx.actor, input.id, input.queryId)),

  validateSql: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/data-source/{id}/sql/validate',
        summary: 'Validate SQL without running it',
        tags,
      },
    })
    .input(validateSqlInput)
    .output(validateSqlOutput)
    .mutation(({ ctx, input: { id, ...body } }) => validateSql(ctx.deps, ctx.actor, id, body)),

  accessLog: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/data-source/{id}/access-log',
        summary: 'Who used the source and when',
        tags,
      },
    })
    .input(accessLogInput)
    .output(accessLogOutput)
    .query(({ ctx, input: { id, ...filter } }) => listAccessLog(ctx.deps.db, ctx.actor, id, filter)),
};
