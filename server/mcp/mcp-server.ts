import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { describeError } from '../kernel/error-response';
import { MCP_TOOLS, type McpToolArgs, type McpToolInputs } from './tools';

/**
 * One MCP server per /mcp request (stateless Streamable HTTP): the actor is the API token's owner as authenticated
 * for this very request, so a suspended or revoked token stops at its next call. Each tool's arguments are parsed
 * with its schema in `inputs` before it runs (the SDK answers a refusal as a tool error naming the argument). A
 * tool's refusal (403, 404, 400) answers the error table's message (with a 422's field map) as a tool error; an
 * unforeseen failure is logged and answered without detail. The SDK loads with the first /mcp request, not with the
 * server.
 */
export async function createMcpServer(
  deps: AppDeps,
  actor: Actor,
  inputs: McpToolInputs,
  log: (err: unknown) => void,
  version: string,
): Promise<McpServer> {
  const { McpServer: Server } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new Server({ name: 'analytics-platform', version });
  for (const name of Object.keys(MCP_TOOLS) as (keyof McpToolArgs)[]) {
    const t = MCP_TOOLS[name];
    server.registerTool(name, { description: t.description, inputSchema: inputs[name] }, async (args: unknown) => {
      try {
        // The SDK has parsed `args` with inputs[name], whose output McpToolInputs ties to this tool's arguments.
        const result = await t.run(deps, actor, args as never);
        return { content: [{ type: 'text' as const, text: JSON.stringify(result) }] };
      } catch (err) {
        const d = describeError(err);
        if (d.unexpected !== undefined) log(d.unexpected);
        // A 422's field map is the useful part («Ошибка валидации» alone tells a client nothing).
        const fields = Object.entries(d.errors ?? {}).map(([k, v]) => `${k}: ${v}`);
        const text = `${d.status}: ${d.message}${fields.length ? ` (${fields.join('; ')})` : ''}`;
        return { content: [{ type: 'text' as const, text }], isError: true };
      }
    });
  }
  return server;
}
