import { readableObject } from '../access/object-access';
import type { AppDeps } from '../app/deps';
import { notFound } from '../kernel/errors';
import { layoutOf } from '../dashboards/layout';
import type { ParameterValues } from '../query/compile/types';
import { widgetDataAs, type WidgetData } from '../widgets/data';
import { filtersForDataset, type ExportFilter } from './filters';
import { viewerFor } from './produce';
import { jobOfRenderToken } from './render-token';
import type { ExportJobRow } from './store';
import { widgetDrawing, type WidgetDrawing } from './widget-rows';

/*
 * The internal render pages' data (GET /api/render/context, POST /api/render/widget/{id}/data) and the check every
 * render route makes: the render token's running job, for this object (GET /api/render/dashboard/{id},
 * GET /api/render/widget/{id}) or, for data, for a widget the job's object shows. Everything is read as the job's user
 * (its owner, or the user a system administrator exported as) through the widget data read (server/query/read.ts).
 */

const RENDER_ROWS = 1_000;

const jobViewer = (deps: AppDeps, job: ExportJobRow) =>
  viewerFor(deps, { ownerUserId: job.ownerId, viewAsUserId: job.viewAsUserId ?? undefined });

/** The job of a render page request: the token's job must be `jobId` and export exactly this object. */
export async function renderPageJob(
  deps: AppDeps,
  token: string | undefined,
  objectType: 'widget' | 'dashboard',
  objectId: number,
  jobId: number | undefined,
): Promise<ExportJobRow> {
  const job = await jobOfRenderToken(deps.db, token);
  if (job.id !== jobId || job.objectType !== objectType || job.objectId !== objectId)
    throw notFound('Объект рендеринга не найден');
  return job;
}

/** The widget ids the job's object shows, in reading order (a dashboard: tiles by row, then column). */
async function widgetIdsOfJob(deps: AppDeps, job: ExportJobRow): Promise<{ name: string; ids: number[] }> {
  const viewer = await jobViewer(deps, job);
  if (job.objectType === 'widget') {
    const { row } = await readableObject(deps.db, viewer.actor, 'widget', job.objectId);
    return { name: row.name, ids: [row.id] };
  }
  const { row } = await readableObject(deps.db, viewer.actor, 'dashboard', job.objectId);
  const items = [...layoutOf(row.layout).items].sort((a, b) => a.y - b.y || a.x - b.x);
  return { name: row.name, ids: [...new Set(items.map((i) => i.widget_id))] };
}

export interface RenderContext {
  object: { type: string; id: number; name: string; widgets: WidgetDrawing[] };
  filters: unknown;
  parameters: unknown;
  view_as_user_id: number | null;
  page_format: 'A4';
  locale: 'ru-RU';
}

/** GET /api/render/context */
export async function renderContext(deps: AppDeps, token: string | undefined): Promise<RenderContext> {
  const job = await jobOfRenderToken(deps.db, token);
  const viewer = await jobViewer(deps, job);
  const { name, ids } = await widgetIdsOfJob(deps, job);
  const widgets: WidgetDrawing[] = [];
  for (const id of ids) widgets.push(await widgetDrawing(deps, viewer.actor, id));
  return {
    object: { type: job.objectType, id: job.objectId, name, widgets },
    filters: job.filters,
    parameters: job.parameters,
    view_as_user_id: job.viewAsUserId,
    page_format: 'A4',
    locale: 'ru-RU',
  };
}

/** POST /api/render/widget/{id}/data: the first rows of a widget the job's object shows, with the job's inputs. */
export async function renderWidgetData(
  deps: AppDeps,
  token: string | undefined,
  widgetId: number,
): Promise<WidgetData> {
  const job = await jobOfRenderToken(deps.db, token);
  const { ids } = await widgetIdsOfJob(deps, job);
  if (!ids.includes(widgetId)) throw notFound('Объект рендеринга не найден');
  const viewer = await jobViewer(deps, job);
  const { row } = await readableObject(deps.db, viewer.actor, 'widget', widgetId);
  // The export's filters are the caller's own: a right on the widget alone does not allow them (widgetReadOf).
  return widgetDataAs(deps, viewer, widgetId, {
    filters: filtersForDataset((job.filters ?? []) as ExportFilter[], row.datasetId),
    parameters: job.parameters as ParameterValues,
    page: 1,
    page_size: RENDER_ROWS,
  });
}
