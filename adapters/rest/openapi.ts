import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { finishDocument } from './openapi-finish';

/** A raw route (file download, multipart upload, HTML page, redirect) described beside its registration. */
export interface RawOperationDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** Must declare `security` (`[]` when public) and `tags` (a catalogue group). */
  operation: Record<string, unknown>;
  /** false: the route answers a protocol of its own (JSON-RPC), not the envelope (see finishDocument). */
  envelope?: false;
}

/**
 * The tRPC-generated document with the raw routes merged in, then finished (openapi-finish.ts): every success
 * wrapped in `{success, data}`, every error an operation can answer in the one error envelope, security from the
 * procedures' gates, root tags, descriptions.
 */
export function buildOpenApiDocument(
  appRouter: AnyRouter,
  opts: { version: string; rawOperations: RawOperationDoc[] },
): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter as never, {
    title: 'Analytics Platform API',
    description:
      'REST API of the self-hosted analytics platform. Every response is an envelope: `{success: true, data}` or ' +
      '`{success: false, error: {code, message, timestamp, errors?}}`. Authorization: `Bearer <session token or API token>`.',
    version: opts.version,
    baseUrl: '/',
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT session token or apt_ API token' },
      // The export renderer's pages (/api/render/...): a short-lived token bound to one export job and object.
      renderToken: { type: 'apiKey', in: 'header', name: 'X-Render-Token' },
    },
  });
  doc.info.license = { name: 'MIT', identifier: 'MIT' };
  doc.info.contact = { name: 'Analytics Platform maintainers' };
  const rawKeys = new Map<string, { envelope: boolean }>();
  for (const raw of opts.rawOperations) {
    const item = ((doc.paths ??= {})[raw.path] ??= {}) as Record<string, unknown>;
    // A copy: finishing the document edits operations in place, and the descriptions are module constants.
    item[raw.method] = structuredClone(raw.operation);
    rawKeys.set(`${raw.method.toUpperCase()} ${raw.path}`, { envelope: raw.envelope !== false });
  }
  doc.servers = [{ url: '/' }];
  finishDocument(doc, appRouter, rawKeys);
  return doc;
}
