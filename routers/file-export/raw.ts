import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { defineRawRoute } from '../../adapters/rest/raw-route';
import { AppError } from '../../server/kernel/errors';
import type { Actor } from '../../server/auth/actor';
import type { AppDeps } from '../../server/app/deps';
import { exportFile } from '../../server/file-export/file-export';
import { CONTENT_TYPES } from '../../server/file-export/produce';
import { renderContext, renderPageJob, renderWidgetData } from '../../server/file-export/render';
import { renderPageHtml } from '../../server/file-export/render-page';
import { RENDER_TOKEN_HEADER } from '../../server/file-export/render-token';
import { notFound } from '../../server/kernel/errors';
import { entityIdText } from '../common';

/*
 * Raw routes of file export: GET /api/exports/{jobId}/file (the owner's download, Content-Disposition with an
 * RFC 5987 file name) and the internal render pages (/api/render/*), which accept only a render token
 * (X-Render-Token) bound to a running export job and its object: no session or API token. The render routes are in
 * the API document (the catalogue counts them) but marked x-internal, so the client documentation leaves them out.
 */

const jobParam = z.strictObject({ jobId: entityIdText() });
const idParam = z.strictObject({ id: entityIdText() });
const jobQuery = z.object({ jobId: entityIdText().optional() });

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw notFound();
  return r.data;
}

/** `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>` (RFC 6266 / RFC 5987). */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const download = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/api/exports/{jobId}/file',
  auth: 'bearer',
  doc: {
    operationId: 'fileExport-download',
    summary: 'Download the exported file',
    description: 'The raw file (no envelope) with Content-Disposition; only the job owner; 404 before it is ready.',
    tags: ['File export'],
    parameters: [{ name: 'jobId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
    responses: {
      '200': {
        description: 'The file, in the media type of the job format (csv, xlsx, pdf, png)',
        // The types the download sends (file.contentType), without parameters such as charset.
        content: Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type.split(';')[0], {}])),
      },
    },
  },
  async handler(req, reply, { deps, actor }) {
    const { jobId } = parsed(jobParam, req.params);
    const file = await exportFile(deps, actor, jobId);
    return reply
      .header('content-disposition', contentDisposition(file.fileName))
      .header('cache-control', 'no-store')
      .type(file.contentType)
      .send(file.body);
  },
});

/** The render token of the request; 401 without one, before anything else is looked at (as a missing bearer). */
const renderToken = (req: FastifyRequest): string => {
  const v = req.headers[RENDER_TOKEN_HEADER];
  if (typeof v !== 'string' || v === '') throw new AppError('unauthorized');
  return v;
};

const internal = (summary: string, extra: Record<string, unknown> = {}) => ({
  summary,
  description: 'Internal: the export renderer only (X-Render-Token of a running export job). Not for clients.',
  tags: ['Render'],
  'x-internal': true,
  security: [{ renderToken: [] }],
  responses: {
    '200': { description: 'Success envelope', content: { 'application/json': { schema: { type: 'object' } } } },
  },
  ...extra,
});

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const pageRoute = (objectType: 'widget' | 'dashboard') =>
  defineRawRoute<AppDeps, Actor>({
    method: 'GET',
    path: `/api/render/${objectType}/{id}`,
    auth: 'public',
    doc: internal(`HTML page of a ${objectType} for the renderer`, {
      operationId: `render-${objectType}Page`,
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
        { name: 'jobId', in: 'query', required: true, schema: { type: 'integer', minimum: 1 } },
      ],
      responses: { '200': { description: 'HTML', content: { 'text/html': {} } } },
    }),
    async handler(req, reply, { deps }) {
      const token = renderToken(req);
      const { id } = parsed(idParam, req.params);
      const { jobId } = parsed(jobQuery, req.query);
      await renderPageJob(deps, token, objectType, id, jobId);
      return reply
        .headers(PAGE_HEADERS)
        .type('text/html; charset=utf-8')
        .send(await renderPageHtml());
    },
  });

const widgetData = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/api/render/widget/{id}/data',
  auth: 'public',
  doc: internal('Widget data inside a render page', {
    operationId: 'render-widgetData',
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
  }),
  async handler(req, _reply, { deps }) {
    const token = renderToken(req);
    const { id } = parsed(idParam, req.params);
    return renderWidgetData(deps, token, id);
  },
});

const context = defineRawRoute<AppDeps, Actor>({
  method: 'GET',
  path: '/api/render/context',
  auth: 'public',
  doc: internal('Export job context for the page', { operationId: 'render-context' }),
  handler: (req, _reply, { deps }) => renderContext(deps, renderToken(req)),
});

export const exportRawRoutes = [download, pageRoute('dashboard'), pageRoute('widget'), widgetData, context];
