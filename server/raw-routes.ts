import type { FastifyInstance } from 'fastify';
import { fileRoutes } from '../routers/data-sources/file-routes';
import type { RawOperationDoc } from '../adapters/rest/openapi';
import type { AppDeps } from './deps';

/**
 * Routes that cannot be tRPC procedures (multipart uploads, file downloads, HTML pages, redirects). Each module
 * registers its fastify routes and describes them for the OpenAPI document, so that the document stays complete.
 */
export interface RawRouteModule {
  register(app: FastifyInstance, deps: AppDeps): void;
  docs: RawOperationDoc[];
}

export const rawRoutes: RawRouteModule[] = [fileRoutes];
