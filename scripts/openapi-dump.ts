/**
 * Writes the OpenAPI document to stdout without a database: `npm run -s openapi:dump > openapi.json`.
 * (The document depends only on the routers and the raw-route descriptions.)
 */
import { buildOpenApiDocument, type RawOperationDoc } from '../adapters/rest/openapi';
import { rawOperationDocs } from '../adapters/rest/raw-route';
import { appRouter } from '../routers';
import { API_VERSION, rawRoutes } from '../server/app/app';

const rawOperations: RawOperationDoc[] = rawOperationDocs(rawRoutes);
process.stdout.write(
  `${JSON.stringify(buildOpenApiDocument(appRouter, { version: API_VERSION, rawOperations }), null, 2)}\n`,
);
