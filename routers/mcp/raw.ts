import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
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

const mcpDoc = (method: string) => ({
  operationId: `mcp-${method}`,
  summary: 'MCP server for API tokens (Streamable HTTP)',
  description:
    'Model Context Protocol over Streamable HTTP, stateless (JSON-RPC 2.0 in the body; answers JSON or an SSE stream ' +
    'per the Accept header). Not an envelope route. Authorization: Bearer <API token> only — a session token is ' +
    'refused with 401, a suspended or revoked token with 401, API tokens switched off by the administrator with 403 ' +
    '«Выпуск и работа MCP-токенов отключены администратором платформы». The tools act with the token owner’s rights ' +
    `(RLS and CLS apply): ${Object.keys(MCP_TOOLS).join(', ')}. run_sql is for source owners and runs one ` +
    'read-only SELECT.',
  tags,
  requestBody:
    method === 'post'
      ? { required: true, content: { 'application/json': { schema: { type: 'object', description: 'JSON-RPC 2.0' } } } }
      : undefined,
  responses: {
    '200': {
      description: 'JSON-RPC answer',
      content: {
        'application/json': { schema: { type: 'object' } },
        'text/event-stream': { schema: { type: 'string' } },
      },
    },
  },
});

const requireApiToken = (actor: Actor) => {
  if (actor.tokenKind !== 'api') {
    throw new AppError('unauthorized', 'MCP принимает только API-токены (Authorization: Bearer <API-токен>)');
  }
};

const mcpPost = defineRawRoute<AppDeps, Actor>({
  method: 'POST',
  path: '/mcp',
  auth: 'bearer',
  doc: mcpDoc('post'),
  handler: async (req, reply, { deps, actor }) => {
    requireApiToken(actor);
    const server = createMcpServer(
      deps,
      actor,
      mcpToolInputs,
      (err) => req.log.error({ err, reqId: req.id }, 'mcp tool failed'),
      MCP_VERSION,
    );
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
