import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { describeError } from '../../server/kernel/error-response';
import { sendError, successEnvelope } from './envelope';
import type { RawOperationDoc } from './openapi';
import { toFastifyPath } from './register-routes';

/*
 * A route that cannot be a procedure (multipart upload, file download, redirect, HTML page) declared once: its
 * method, its catalogue path, whether it needs a bearer token, its OpenAPI entry and its handler. Registration gives
 * it what every procedure route has: authentication before anything of the request is read, the error envelope for
 * any failure (a 500 logged with the request id, never a stack in the body), and its place in /api/v3/api-docs.
 *
 * The adapter knows nothing of any area: the services a handler calls come in `ctx.deps`, and who the caller is
 * comes from the `authenticate` function the composition passes in.
 */

type RawMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * A fastify scope that routes share, registered once with its plugins (e.g. @fastify/multipart with the
 * installation's upload limit) so that the plugins apply to these routes only.
 */
export interface RawScope<TDeps> {
  setup(scope: FastifyInstance, deps: TDeps): Promise<void>;
}

interface RawRouteBase<TDeps> {
  method: RawMethod;
  /** Catalogue form: `/api/files/{id}`. */
  path: string;
  /**
   * The OpenAPI operation; `security` is filled in from `auth`. Must declare `tags` (a catalogue group). null: served
   * but left out of the document (e.g. the 405 of a method an endpoint does not use: an operation without a 2xx).
   */
  doc: Record<string, unknown> | null;
  /**
   * false: the handler answers a protocol of its own (the JSON-RPC of /mcp) instead of the envelope. Its declared
   * responses stand as they are (no success envelope around the 2xx); failures before the handler (authentication,
   * body parsing) still answer the error envelope.
   */
  envelope?: false;
  scope?: RawScope<TDeps>;
}

/**
 * A handler's result goes in the success envelope; a handler that answers by itself (a download, a redirect, a
 * page) returns the reply.
 */
type Handler<TCtx> = (req: FastifyRequest, reply: FastifyReply, ctx: TCtx) => Promise<unknown>;

interface BearerRawRoute<TDeps, TActor> extends RawRouteBase<TDeps> {
  auth: 'bearer';
  handler: Handler<{ deps: TDeps; actor: TActor }>;
}

interface PublicRawRoute<TDeps> extends RawRouteBase<TDeps> {
  auth: 'public';
  handler: Handler<{ deps: TDeps; actor: undefined }>;
}

export type RawRoute<TDeps, TActor> = BearerRawRoute<TDeps, TActor> | PublicRawRoute<TDeps>;

export function defineRawRoute<TDeps, TActor>(route: RawRoute<TDeps, TActor>): RawRoute<TDeps, TActor> {
  return route;
}

const BEARER = [{ bearerAuth: [] }];

/**
 * A raw route's JSON answer for its doc, described by a zod schema. The JSON Schema is made when the document is
 * (GET /api/v3/api-docs reads `schema`), not when the module loads: every start would pay for it (bench:startup).
 */
export function jsonResponse(description: string, schema: z.ZodType) {
  let made: Record<string, unknown> | undefined;
  return {
    description,
    content: {
      'application/json': {
        get schema() {
          if (!made) {
            const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
              io: 'output',
              unrepresentable: 'any',
            }) as Record<string, unknown>;
            made = rest;
          }
          return made;
        },
      },
    },
  };
}

/** The routes' entries for the OpenAPI document (merged by buildOpenApiDocument). */
export function rawOperationDocs<TDeps, TActor>(routes: readonly RawRoute<TDeps, TActor>[]): RawOperationDoc[] {
  return routes.flatMap((route) =>
    route.doc === null
      ? []
      : [
          {
            method: route.method.toLowerCase() as RawOperationDoc['method'],
            path: route.path,
            // A route authenticated otherwise (the render pages' X-Render-Token) declares its own security.
            operation: { security: route.auth === 'bearer' ? BEARER : [], ...route.doc },
            ...(route.envelope === false ? { envelope: false as const } : {}),
          },
        ],
  );
}

export interface RawRouteOptions<TDeps, TActor> {
  deps: TDeps;
  /** Who the caller is; throws (an AppError, 401) without a valid token. */
  authenticate(req: FastifyRequest, deps: TDeps): Promise<TActor>;
  onUnexpected(req: FastifyRequest, err: unknown): void;
}

export function registerRawRoutes<TDeps, TActor>(
  app: FastifyInstance,
  routes: readonly RawRoute<TDeps, TActor>[],
  opts: RawRouteOptions<TDeps, TActor>,
): void {
  const actors = new WeakMap<FastifyRequest, TActor>();

  // onRequest runs before the body is parsed: no token is a 401 even for a malformed or oversized body.
  const authFirst = async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      actors.set(req, await opts.authenticate(req, opts.deps));
    } catch (err) {
      return sendError(reply, describeError(err));
    }
  };

  const addRoute = (target: FastifyInstance, route: RawRoute<TDeps, TActor>) => {
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        const result =
          route.auth === 'bearer'
            ? await route.handler(req, reply, { deps: opts.deps, actor: actors.get(req) as TActor })
            : await route.handler(req, reply, { deps: opts.deps, actor: undefined });
        if (result === reply || reply.sent) return reply;
        return reply.code(200).send(successEnvelope(result));
      } catch (err) {
        const d = describeError(err);
        if (d.unexpected !== undefined) opts.onUnexpected(req, d.unexpected);
        else if (d.cause !== undefined) req.log.warn({ err: d.cause, reqId: req.id, status: d.status }, d.message);
        return sendError(reply, d);
      }
    };
    target.route({
      method: route.method,
      url: toFastifyPath(route.path),
      ...(route.auth === 'bearer' ? { onRequest: authFirst } : {}),
      handler,
    });
  };

  const scoped = new Map<RawScope<TDeps>, RawRoute<TDeps, TActor>[]>();
  for (const route of routes) {
    if (!route.scope) addRoute(app, route);
    else scoped.set(route.scope, [...(scoped.get(route.scope) ?? []), route]);
  }
  for (const [scope, members] of scoped) {
    void app.register(async (instance) => {
      await scope.setup(instance, opts.deps);
      for (const route of members) addRoute(instance, route);
    });
  }
}
