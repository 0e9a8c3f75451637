import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { errorEnvelope } from '../../adapters/rest/envelope';
import { lazySchemaCompilers } from './schema-compilers';

/*
 * The human docs page (/docs, Swagger UI) on first use. @fastify/swagger and @fastify/swagger-ui, with
 * @fastify/static, glob and yaml below them, took about 50 ms of every start and their memory, for a page an idle
 * server never shows. The app routes /docs and everything under it here; the first request registers the two plugins
 * on an app of their own (the same options as before, with the app's OpenAPI document) and every request is answered by it through inject, so the
 * answers (pages, assets, redirects, 304s) are the plugins' own, while the main app's hooks (metrics, access log,
 * drain) see the request as any other.
 */

const PREFIX = '/docs';
/** Headers of the inner answer the main app's reply sets itself. */
const OWN_HEADERS = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date']);

export function registerLazyDocs(app: FastifyInstance, document: () => Promise<object>): void {
  let inner: Promise<FastifyInstance> | undefined;
  const docsApp = async () => {
    const [{ default: swagger }, { default: swaggerUi }, specification] = await Promise.all([
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
      document(),
    ]);
    const docs = Fastify({ logger: false, schemaController: lazySchemaCompilers() });
    // Paths under /docs it does not know answer the app's own 404 envelope, as they did when it was registered there.
    docs.setNotFoundHandler((req, reply) =>
      reply.code(404).send(errorEnvelope(404, `Путь не найден: ${req.method} ${req.url.split('?')[0]}`)),
    );
    await docs.register(swagger, { mode: 'static', specification: { document: specification as never } });
    await docs.register(swaggerUi, { routePrefix: PREFIX });
    await docs.ready();
    return docs;
  };
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    inner ??= docsApp().catch((e: unknown) => {
      inner = undefined; // tried again by the next request
      throw e;
    });
    const docs = await inner;
    const res = await docs.inject({ method: req.method as 'GET', url: req.url, headers: req.headers });
    reply.code(res.statusCode);
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !OWN_HEADERS.has(name)) reply.header(name, value);
    return reply.send(res.rawPayload);
  };
  const route = { schema: { hide: true } };
  app.get(PREFIX, route, handler);
  app.get(`${PREFIX}/*`, route, handler);
}
