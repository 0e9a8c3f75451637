import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import { appRouter, type AppRouter } from '../../routers';
import { registerRestRoutes } from '../../adapters/rest/register-routes';
import { errorEnvelope } from '../../adapters/rest/envelope';
import { rememberedBody } from '../../adapters/rest/input-memo';
import { createContext } from '../../routers/context';
import type { AppDeps } from './deps';
import { ERROR_TABLE } from '../kernel/errors';
import { rawOperationDocs, registerRawRoutes } from '../../adapters/rest/raw-route';
import { fileRawRoutes } from '../../routers/data-sources/raw';
import { viewerPageRoutes } from '../../routers/public-link/page';
import { registerPublicBodyLimit, registerPublicRateLimit } from './public-rate-limit';
import { ssoRawRoutes } from '../../routers/sso/raw';
import { driverRawRoutes } from '../../routers/admin/raw';
import { mcpRawRoutes } from '../../routers/mcp/raw';
import { exportRawRoutes } from '../../routers/file-export/raw';
import { authenticate } from '../auth/authenticate';
import { sourceConnectionBudget } from '../../adapters/sources';
import { AccessLogController, batchedStdout } from './access-log';
import { Readiness, registerHealthRoutes } from './health';
import { registerMetrics } from './metrics';
import { registerLazyDocs } from './docs';
import { lazySchemaCompilers } from './schema-compilers';

export const API_VERSION = '1.0.0';

/**
 * Connections waiting to be accepted. Node's 511 overflows when a crowd opens a share link at once (200 viewers
 * with a browser's 6 connections each): the kernel then drops connections, which retry after 1 s and 3 s or are
 * reset. The kernel caps it at net.core.somaxconn.
 */
export const LISTEN_BACKLOG = 4096;

/** Routes that cannot be procedures (multipart uploads, downloads, pages, redirects), each declared in its area. */
export const rawRoutes = [...fileRawRoutes, ...ssoRawRoutes, ...driverRawRoutes, ...mcpRawRoutes, ...exportRawRoutes];

export interface BuildAppOptions {
  logger?: boolean | { level: string };
  /** GET /readyz's state, drained by main.ts on SIGTERM; the app makes its own when not given. */
  readiness?: Readiness;
}

/** Fastify's own failures (bad JSON, body too large, wrong content type) mapped into the envelope. */
function frameworkError(err: FastifyError): { status: number; message: string } {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'Тело запроса не является корректным JSON' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: ERROR_TABLE.payload_too_large.message };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 415, message: ERROR_TABLE.unsupported_media_type.message };
    // The router's own refusals (a path that is not valid percent-encoded UTF-8, a path parameter over
    // maxParamLength): fastify answers them in its own JSON unless frameworkErrors takes them.
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 400, message: 'Некорректный адрес запроса' };
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return {
      status: err.statusCode,
      message: err.statusCode === 400 ? 'Некорректный запрос' : ERROR_TABLE.bad_request.message,
    };
  }
  return { status: 500, message: ERROR_TABLE.internal.message };
}

function isPercentEncodedUtf8(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

export async function buildApp(deps: AppDeps, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { total, perServer, waitMs } = deps.config.sourceConnections;
  sourceConnectionBudget.configure({ total, perServer, waitMs });
  const app = Fastify({
    logger: typeof opts.logger === 'object' ? { ...opts.logger, stream: batchedStdout() } : (opts.logger ?? false),
    logController: new AccessLogController(),
    bodyLimit: deps.config.bodyLimitBytes,
    schemaController: lazySchemaCompilers(),
    routerOptions: { maxParamLength: 5000 },
    // The client address (req.ip: login and unlock throttles, the public rate limit) is the peer's unless it is a
    // trusted proxy, whose X-Forwarded-For then names the client.
    trustProxy: deps.config.trustProxy,
    // A request that arrives on a kept-alive connection while the server closes is served, not refused with fastify's
    // 503: after SIGTERM every answer closes its connection (health.ts), so only the odd race lands here, and its
    // caller would see a failure the drain exists to avoid.
    return503OnClosing: false,
    // Errors of the router itself, before any route or hook runs, in the envelope too.
    frameworkErrors: (err, _req, reply) => {
      const { status, message } = frameworkError(err);
      // The option is typed generic over the route's reply schema; these errors come before any route.
      return (reply as FastifyReply).code(status).send(errorEnvelope(status, message));
    },
  });

  // An empty body with a JSON content type means "no body" (action calls such as /suspend), not a parse error.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  // Bodies are JSON (or multipart on upload routes): plain text is refused with 415 instead of reaching a procedure.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    // An operation that remembers its inputs (widget data) parsed the same request before: that body, frozen.
    const remembered = rememberedBody(req, body as string);
    if (remembered !== undefined) return done(null, remembered);
    defaultJson(req, body as string, done);
  });

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const { status, message } = frameworkError(err);
    if (status >= 500) req.log.error({ err, reqId: req.id }, 'unhandled error');
    return reply.code(status).send(errorEnvelope(status, message));
  });
  // As with the reference platform's security filter, authentication comes before routing: without a token an
  // unknown protected path is a 401, so that a caller cannot map the API anonymously. With a token it is a 404.
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    // A path that is not valid percent-encoded UTF-8 is a malformed request whether or not a route would match it
    // (the router answers FST_ERR_BAD_URL only when one does): 400, as above.
    if (!isPercentEncodedUtf8(path)) return reply.code(400).send(errorEnvelope(400, 'Некорректный адрес запроса'));
    const anonymousAllowed = /^\/api\/(auth|public)\//.test(path) || !path.startsWith('/api/');
    if (!req.headers.authorization && !anonymousAllowed) {
      return reply.code(401).send(errorEnvelope(401, ERROR_TABLE.unauthorized.message));
    }
    return reply.code(404).send(errorEnvelope(404, `Путь не найден: ${req.method} ${path}`));
  });

  // The app's source connections and running SQL console queries end with it.
  // The node listens for the other nodes' cache changes from the start; readiness does not wait for it.
  deps.cacheBus.start();
  app.addHook('onClose', async () => {
    await deps.cacheBus.stop();
    await deps.jobs.stop();
    await deps.localQueries.abortAll();
    await deps.connectors.closeAll();
    await deps.storage.close();
    await deps.redis?.close();
  });

  // First: a worker's paths, the drain's Connection: close, /healthz, /readyz, /metrics and every request's duration.
  registerHealthRoutes(app, deps, opts.readiness ?? new Readiness(deps));
  registerMetrics(app, deps);

  // Before any route is added: the unauthenticated share-link paths are rate limited per client address and take
  // small bodies only.
  await registerPublicRateLimit(app, deps);
  registerPublicBodyLimit(app);

  const makeContext = (req: Parameters<typeof createContext>[1]) => createContext(deps, req);
  registerRestRoutes(app, appRouter, makeContext, (req, err) =>
    req.log.error({ err, reqId: req.id }, 'procedure failed'),
  );

  // The share-link viewer page (/s/...) is served like a raw route but is not an API operation: not documented.
  registerRawRoutes(app, [...rawRoutes, ...viewerPageRoutes], {
    deps,
    authenticate: (req) => authenticate(deps, req.headers.authorization),
    onUnexpected: (req, err) => req.log.error({ err, reqId: req.id }, 'raw route failed'),
  });

  // tRPC's adapter hands a multipart body on unread and then fails to serialise it (a 500). No procedure takes one
  // (uploads are raw routes under /api), so /trpc refuses it like any body type the API does not take.
  app.addHook('onRequest', async (req, reply) => {
    if (req.url.startsWith('/trpc') && /^multipart\//i.test(req.headers['content-type'] ?? '')) {
      const { status, message } = ERROR_TABLE.unsupported_media_type;
      return reply.code(status).send(errorEnvelope(status, message));
    }
  });
  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: ({ req }) => makeContext(req),
      onError: ({ error, req }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR')
          req.log.error({ err: error.cause ?? error }, 'trpc procedure failed');
      },
    } satisfies FastifyTRPCPluginOptions<AppRouter>['trpcOptions'],
  });

  // The OpenAPI document is built on its first request (GET /api/v3/api-docs, /docs), not at start: every
  // procedure's schemas converted to JSON Schema cost tens of milliseconds and megabytes an idle server never needs.
  // Its builder is imported then too: trpc-to-openapi brings its HTTP adapters (co-body, qs, mime-db: about 40 ms of
  // every start).
  let document: Promise<object> | undefined;
  const openApiDocument = () =>
    (document ??= import('../../adapters/rest/openapi')
      .then(({ buildOpenApiDocument }) =>
        buildOpenApiDocument(appRouter, { version: API_VERSION, rawOperations: rawOperationDocs(rawRoutes) }),
      )
      .catch((e: unknown) => {
        document = undefined; // built again by the next request, as when it was built in place
        throw e;
      }));
  app.get('/api/v3/api-docs', { schema: { hide: true } }, async (_req, reply) => reply.send(await openApiDocument()));
  registerLazyDocs(app, openApiDocument);

  return app;
}
