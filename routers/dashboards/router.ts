import { authedProcedure, router } from '../../server/app/trpc';
import {
  copyDashboard,
  createDashboard,
  deleteDashboard,
  getDashboard,
  getDashboardSchema,
  listDashboards,
  saveDashboardSchema,
  updateDashboardInfo,
} from '../../server/dashboards/dashboards';
import { dashboardData } from '../../server/dashboards/data';
import { deletedOutput, idInput } from '../common';
import {
  copyDashboardInput,
  createDashboardInput,
  dashboardDataInput,
  dashboardDataOutput,
  dashboardDetails,
  dashboardSchemaView,
  dashboardView,
  listDashboardsInput,
  listDashboardsOutput,
  saveDashboardSchemaInput,
  updateDashboardInput,
} from './schemas';

const tags = ['Dashboards'];

export const dashboardRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dashboard', summary: 'List dashboards', tags } })
    .input(listDashboardsInput)
    .output(listDashboardsOutput)
    .query(({ ctx, input }) => listDashboards(ctx.deps, ctx.actor, input)),

  create: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dashboard', summary: 'Create an empty dashboard', tags } })
    .input(createDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input }) => createDashboard(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dashboard/{id}', summary: 'Dashboard details', tags } })
    .input(idInput)
    .output(dashboardDetails)
    .query(({ ctx, input }) => getDashboard(ctx.deps, ctx.actor, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/dashboard/{id}', summary: 'Rename or describe a dashboard', tags } })
    .input(updateDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input: { id, ...body } }) => updateDashboardInfo(ctx.deps, ctx.actor, id, body)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/dashboard/{id}', summary: 'Delete a dashboard', tags } })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDashboard(ctx.deps, ctx.actor, input.id)),

  getSchema: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/dashboard/{id}/schema', summary: 'Layout of the dashboard', tags } })
    .input(idInput)
    .output(dashboardSchemaView)
    .query(({ ctx, input }) => getDashboardSchema(ctx.deps, ctx.actor, input.id)),

  saveSchema: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/dashboard/{id}/schema',
        summary: 'Replace the whole layout (what is left out is deleted)',
        tags,
      },
    })
    .input(saveDashboardSchemaInput)
    .output(dashboardSchemaView)
    .mutation(({ ctx, input: { id, ...layout } }) => saveDashboardSchema(ctx.deps, ctx.actor, id, layout)),

  copy: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/dashboard/{id}/copy', summary: 'Duplicate a dashboard', tags } })
    .input(copyDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input: { id, ...body } }) => copyDashboard(ctx.deps, ctx.actor, id, body)),

  data: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dashboard/{id}/data',
        summary: 'Data of several widgets at once (a failing widget gets an error entry)',
        tags,
      },
    })
    .input(dashboardDataInput)
    .output(dashboardDataOutput)
    .mutation(({ ctx, input: { id, ...body } }) => dashboardData(ctx.deps, ctx.actor, id, body)),
});
