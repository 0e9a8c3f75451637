import { authedProcedure, restMemoizesInput, restSkipsOutputParse, router } from '../trpc';
import { widgetData, widgetPreview } from '../../server/widgets/data';
import { createWidget, deleteWidget, getWidget, listWidgets, updateWidget } from '../../server/widgets/widgets';
import { dataPathHeaders, deletedOutput, idInput } from '../common';
import {
  createWidgetInput,
  listWidgetsInput,
  listWidgetsOutput,
  updateWidgetInput,
  widgetDataInput,
  widgetDataOutput,
  widgetPreviewInput,
  widgetView,
} from './schemas';

const tags = ['Widgets'];

export const widgetRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/widget', summary: 'List widgets', tags } })
    .input(listWidgetsInput)
    .output(listWidgetsOutput)
    .query(({ ctx, input }) => listWidgets(ctx.deps.db, ctx.actor, input)),

  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/widget',
        summary: 'Create a widget (the configuration is compiled to check it)',
        tags,
      },
    })
    .input(createWidgetInput)
    .output(widgetView)
    .mutation(({ ctx, input }) => createWidget(ctx.deps, ctx.actor, input)),

  // Before {id}: a static path segment.
  preview: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/widget/preview',
        summary: 'Data for an unsaved widget configuration',
        tags,
        responseHeaders: dataPathHeaders,
      },
    })
    .input(widgetPreviewInput)
    .output(widgetDataOutput)
    .mutation(({ ctx, input }) => widgetPreview(ctx.deps, ctx.actor, input)),

  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/widget/{id}', summary: 'Widget details', tags } })
    .input(idInput)
    .output(widgetView)
    .query(({ ctx, input }) => getWidget(ctx.deps.db, ctx.actor, input.id)),

  update: authedProcedure
    .meta({ openapi: { method: 'PUT', path: '/api/widget/{id}', summary: "Replace a widget's configuration", tags } })
    .input(updateWidgetInput)
    .output(widgetView)
    .mutation(({ ctx, input: { id, ...body } }) => updateWidget(ctx.deps, ctx.actor, id, body)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/widget/{id}', summary: 'Delete a widget', tags } })
    .input(idInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteWidget(ctx.deps, ctx.actor, input.id)),

  data: restMemoizesInput(
    restSkipsOutputParse(
      authedProcedure
        .meta({
          openapi: {
            method: 'POST',
            path: '/api/widget/{id}/data',
            summary: 'Widget data (request filters AND-ed with the saved ones)',
            description:
              'A caller who may read the widget but not its dataset (a right on the widget alone) reads the saved ' +
              'configuration only: paging, and sorts by saved shelves, are allowed; shelves, a kind, calculated fields or ' +
              'filters other than the saved ones answer 403 «Доступ запрещён».',
            tags,
            responseHeaders: dataPathHeaders,
          },
        })
        .input(widgetDataInput)
        .output(widgetDataOutput)
        // The input object itself, not a copy: a remembered one is the same object for every identical request, which
        // lets widgetData reuse what it built for it (server/widgets/data.ts).
        .mutation(({ ctx, input }) => widgetData(ctx.deps, ctx.actor, input.id, input)),
    ),
  ),
});
