import { authedProcedure, router } from '../trpc';
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
import { dataPathHeaders, deletedOutput, idInput } from '../common';
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
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dashboard',
        summary: 'List dashboards',
        description:
          'A page of the std list: `data.content` and `data.page` {size, number, total_elements, total_pages}; filters by name search, author, workspace and creation or update time. Access: any authenticated user.',
        tags,
      },
    })
    .input(listDashboardsInput)
    .output(listDashboardsOutput)
    .query(({ ctx, input }) => listDashboards(ctx.deps, ctx.actor, input)),

  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dashboard',
        summary: 'Create an empty dashboard',
        description:
          'Name, description and workspace; the layout starts empty. Access: Редактор or Администратор of the workspace.',
        tags,
      },
    })
    .input(createDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input }) => createDashboard(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dashboard/{id}',
        summary: 'Dashboard details',
        description:
          'Name, description, workspace, author, edit time and the ids of the widgets its layout shows. Access: any authenticated user.',
        tags,
      },
    })
    .input(idInput)
    .output(dashboardDetails)
    .query(({ ctx, input }) => getDashboard(ctx.deps, ctx.actor, input.id)),

  update: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/dashboard/{id}',
        summary: 'Rename or describe a dashboard',
        description:
          'Name and description (a description left out is kept). Access: owner (the author, a user or group with the edit right, or Администратор of its workspace).',
        tags,
      },
    })
    .input(updateDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input: { id, ...body } }) => updateDashboardInfo(ctx.deps, ctx.actor, id, body)),

  delete: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/dashboard/{id}',
        summary: 'Delete a dashboard',
        description:
          'Irreversible; its object rights go with it. Access: the author with an editing role, or Администратор of its workspace.',
        tags,
      },
    })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDashboard(ctx.deps, ctx.actor, input.id)),

  getSchema: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/dashboard/{id}/schema',
        summary: 'Layout of the dashboard',
        description:
          'Tabs, tiles (widget_id, tab_id, x, y, w, h), selectors (a dataset field, its operator and values, the widgets it drives) and dashboard parameters. Access: any authenticated user.',
        tags,
      },
    })
    .input(idInput)
    .output(dashboardSchemaView)
    .query(({ ctx, input }) => getDashboardSchema(ctx.deps, ctx.actor, input.id)),

  saveSchema: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/dashboard/{id}/schema',
        summary: 'Replace the whole layout (what is left out is deleted)',
        description: `Saved whole; it may name only widgets and fields of the dashboard's own workspace, and selectors and parameters only drive its tiles. Every problem is a 422 naming its path (items[0].widgetId); nothing is saved then. Access: owner (the author, a user or group with the edit right, or Администратор of its workspace).`,
        tags,
      },
    })
    .input(saveDashboardSchemaInput)
    .output(dashboardSchemaView)
    .mutation(({ ctx, input: { id, ...layout } }) => saveDashboardSchema(ctx.deps, ctx.actor, id, layout)),

  copy: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dashboard/{id}/copy',
        summary: 'Duplicate a dashboard',
        description: `Into its own workspace or another where the caller may create (only an empty layout leaves its workspace); copy_widgets clones the tiles' widgets and the copy shows the clones. Access: owner (the author, a user or group with the edit right, or Администратор of its workspace).`,
        tags,
      },
    })
    .input(copyDashboardInput)
    .output(dashboardView)
    .mutation(({ ctx, input: { id, ...body } }) => copyDashboard(ctx.deps, ctx.actor, id, body)),

  data: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/dashboard/{id}/data',
        summary: 'Data of several widgets at once (a failing widget gets an error entry)',
        description:
          'Each requested widget (empty widget_ids: all tiles) answers as POST /api/widget/{id}/data would, with the selector values and dashboard parameters that drive it; a widget that fails gets {widget_id, error} and the others still answer. view_as_user_id: system administrator only. Access: any authenticated user.',
        tags,
        responseHeaders: dataPathHeaders,
      },
    })
    .input(dashboardDataInput)
    .output(dashboardDataOutput)
    .mutation(({ ctx, input: { id, ...body } }) => dashboardData(ctx.deps, ctx.actor, id, body)),
});
