import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AnyRouter, AnyProcedure } from '@trpc/server';
import { invokeProcedure, memoizableInput } from './invoke';
import { InputMemo, memoOf } from './input-memo';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { describeError } from '../../server/kernel/error-response';
import { convertParam, planInput, type InputPlan } from './input-coercion';
import { sendError, successEnvelope } from './envelope';
import { rememberedEnvelopeText } from './envelope-memo';
import { withReplyHeaders } from '../../server/kernel/reply-headers';

export interface RestRoute {
  method: string;
  path: string;
  procedurePath: string;
}

/** `/api/users/{id}` -> `/api/users/:id` */
export const toFastifyPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

function buildInput(plan: InputPlan, req: FastifyRequest): unknown {
  const params = req.params as Record<string, string>;
  const query = req.query as Record<string, string | string[]>;
  const body = req.body;
  if (plan.isVoid) return undefined;
  const fromText: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const { known, value } = convertParam(plan, name, raw);
    if (known) fromText[name] = value;
  }
  const fromPath: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(params)) {
    fromPath[name] = convertParam(plan, name, raw).value ?? raw;
  }
  if (body === undefined || body === null) return { ...fromText, ...fromPath };
  // A body that is not an object goes to zod as it is, which answers 422 for it.
  if (typeof body !== 'object' || Array.isArray(body)) return Object.keys(fromPath).length ? { ...fromPath } : body;
  // Path parameters win over anything of the same name in the body.
  return { ...fromText, ...(body as Record<string, unknown>), ...fromPath };
}

/**
 * Registers one fastify route per procedure that declares `meta.openapi`, at the catalogue's exact method and
 * path. The procedure's own middleware chain runs with the same context as /trpc; the outcome goes in the envelope.
 */
export function registerRestRoutes<TCtx>(
  app: FastifyInstance,
  appRouter: AnyRouter,
  createContext: (req: FastifyRequest) => TCtx,
  onUnexpected: (req: FastifyRequest, err: unknown) => void,
): RestRoute[] {
  const routes: RestRoute[] = [];
  const procedures = appRouter._def.procedures as Record<string, AnyProcedure>;
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const def = procedure._def as unknown as {
      meta?: OpenApiMeta;
      inputs: unknown[];
      middlewares: unknown[];
      type: 'query' | 'mutation' | 'subscription';
      restInputMemo?: boolean;
    };
    const openapi = def.meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const plan = planInput(def.inputs[0] as Parameters<typeof planInput>[0]);
    // Headers the operation declares (X-Data-Path): its domain code notes them (server/kernel/reply-headers.ts).
    const headerNames = Object.keys(
      (openapi as { responseHeaders?: { shape?: Record<string, unknown> } }).responseHeaders?.shape ?? {},
    );
    // Procedures marked restMemoizesInput (routers/trpc.ts) reuse the input parsed for an identical request.
    if (def.restInputMemo && !memoizableInput(def))
      throw new Error(`${procedurePath}: restMemoizesInput needs exactly one input parser`);
    const memo = def.restInputMemo ? new InputMemo() : undefined;
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        const remembered = memo && memoOf(req);
        // A remembered input stands for the parsed one: the request's input is not even assembled.
        const input = remembered && 'known' in remembered ? undefined : buildInput(plan, req);
        const invoke = () => invokeProcedure(def, procedurePath, createContext(req) as object, input, remembered);
        const data = headerNames.length
          ? await withReplyHeaders(headerNames, invoke, (name, value) => void reply.header(name, value))
          : await invoke();
        // A repeated answer's envelope as text made once (adapters/rest/envelope-memo.ts).
        const text = memo && rememberedEnvelopeText(data);
        if (text) return reply.code(200).type('application/json; charset=utf-8').send(text);
        return reply.code(200).send(successEnvelope(data));
      } catch (err) {
        const d = describeError(err);
        if (d.unexpected !== undefined) onUnexpected(req, d.unexpected);
        else if (d.cause !== undefined) req.log.warn({ err: d.cause, reqId: req.id, status: d.status }, d.message);
        return sendError(reply, d);
      }
    };
    app.route({
      method: openapi.method as HTTPMethods,
      url: toFastifyPath(openapi.path),
      handler,
      ...(memo && { config: { restInputMemo: memo } }),
    });
    routes.push({ method: openapi.method, path: openapi.path, procedurePath });
  }
  return routes;
}
