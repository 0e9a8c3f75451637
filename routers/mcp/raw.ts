import { defineRawRoute } from '../../adapters/rest/raw-route';
import type { Actor } from '../../server/auth/actor';
import type { AppDeps } from '../../server/app/deps';
import { AppError } from '../../server/kernel/errors';
import { createMcpServer } from '../../server/mcp/mcp-server';
import { MCP_TOOLS } from '../../server/mcp/tools';
import { mcpToolInputs } from './schemas';

/*
 * POST /mcp: the MCP server (Model Context Protocol, Streamable HTTP, stateless: no session id, every request stands
 * alone) for the API tokens. Authenticated before the body is read, like every raw route; then only an API token is
 * accepted: a session token is refused with 401. The token switch and its conditions apply as on every call
 * (authenticate.ts), and the tools act with the owner's rights. GET and DELETE (SSE stream, session end) have no
 * meaning without sessions: 405.
 */

const MCP_VERSION = '1.0.0';
const tags = ['API tokens'];

// JSON-RPC 2.0 as the transport speaks it (@modelcontextprotocol/sdk, Streamable HTTP with JSON responses).
const jsonRpcId = { type: ['string', 'integer'], description: 'The request id (echoed in its answer)' };
const jsonRpcVersion = { type: 'string', enum: ['2.0'] };
const jsonRpcError = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', description: 'JSON-RPC error code (-32700 parse error, -32600 invalid request, ...)' },
    message: { type: 'string' },
    data: { description: 'More about the error' },
  },
};
const jsonRpcMessage = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: jsonRpcVersion,
    id: jsonRpcId,
    method: { type: 'string', description: 'initialize, tools/list, tools/call, notifications/initialized, ...' },
    params: { type: 'object' },
  },
};
const jsonRpcResponse = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: { jsonrpc: jsonRpcVersion, id: jsonRpcId, result: { type: 'object' }, error: jsonRpcError },
};
/** A refusal of the transport itself, before any request is read: JSON-RPC with id null. */
const transportError = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['jsonrpc', 'error', 'id'],
        properties: { jsonrpc: jsonRpcVersion, error: jsonRpcError, id: { type: 'null' } },
      },
    },
  },
});

const mcpDoc = {
  operationId: 'mcp-post',
  summary: 'MCP server for API tokens (Streamable HTTP)',
  description:
    'Model Context Protocol over Streamable HTTP, stateless: a JSON-RPC 2.0 message (or a batch) in the body, the ' +
    'JSON-RPC answer as JSON. Not an envelope route: only failures before the MCP transport (authentication, a body ' +
    'that is not JSON) answer the error envelope. Send `Accept: application/json, text/event-stream`. ' +
    'Authorization: Bearer <API token> only — a session token is refused with 401, a suspended or revoked token ' +
    'with 401, API tokens switched off by the administrator with 403 «Выпуск и работа MCP-токенов отключены ' +
    'администратором платформы». The tools act with the token owner’s rights ' +
    `(RLS and CLS apply): ${Object.keys(MCP_TOOLS).join(', ')}. run_sql is for source owners and runs one ` +
    'read-only SELECT. A tool failure is a JSON-RPC result with isError, not an HTTP error.',
  tags,
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: { anyOf: [jsonRpcMessage, { type: 'array', items: jsonRpcMessage, minItems: 1 }] },
      },
    },
  },
  responses: {
    '200': {
      description: 'The JSON-RPC answer (an array of answers for a batch)',
      content: {
        'application/json': {
          schema: { anyOf: [jsonRpcResponse, { type: 'array', items: jsonRpcResponse }] },
        },
      },
    },
    '202': { description: 'Notifications or responses only: accepted, nothing to answer' },
    '400': transportError('Not a JSON-RPC 2.0 message, or a batch the transport refuses'),
    '406': transportError('Accept does not name both application/json and text/event-stream'),
  },
};

const requireApiToken = (actor: Actor) => {
  if (actor.tokenKind !== 'api') {
    throw new AppError('unauthorized', 'MCP принимает только API-токены (Authorization: Bearer <API-токен>)');
  }
};

const mcpPost = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/mcp',
  auth: 'bearer',
  doc: mcpDoc,
  envelope: false,
  handler: async (req, reply, { deps, actor }) => {
    requireApiToken(actor);
    const server = await createMcpServer(
      deps,
      actor,
      mcpToolInputs,
      (err) => req.log.error({ err, reqId: req.id }, 'mcp tool failed'),
      MCP_VERSION,
    );
    // The SDK loads with the first /mcp request, not with the server.
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
    return reply;
  },
});

const notAllowed = (method: 'GET' | 'DELETE') =>
  defineRawRoute<AppDeps, Actor>({
    method,
    path: '/mcp',
    auth: 'bearer',
    // Served (the Streamable HTTP transport's answer for a stateless server) but not documented: an operation whose
    // only answer is 405 has no 2xx, which OpenAPI linters rightly refuse.
    doc: null,
    handler: async (_req, reply, { actor }) => {
      requireApiToken(actor);
      return reply
        .code(405)
        .header('allow', 'POST')
        .send({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Метод не поддерживается: используйте POST' },
          id: null,
        });
    },
  });

export const mcpRawRoutes = [mcpPost, notAllowed('GET'), notAllowed('DELETE')];
