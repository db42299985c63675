/**
 * The AI-agent endpoint (POST /mcp): a Model Context Protocol server over Streamable HTTP, stateless — a new
 * server and transport for each HTTP request, no session id, JSON answers (no SSE stream) — so any API copy
 * answers any request. The route (api/routes/mcp) has already authenticated the caller, counted the request
 * against its budget and parsed the JSON body within the /mcp limit; tools and resources act as that caller.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { AppError } from '../../common/errors';
import type { AppContext } from '../context';
import { mapError } from '../middlewares/errors';
import type { Reply } from '../routing';
import { listResources, readResource, RESOURCE_TEMPLATES } from './resources';
import { resolveTools, runTool, toolsFor } from './tools';

export const MCP_SERVER_INFO = { name: 'data-service', version: '1.0.0' };

/**
 * One JSON Schema validator for every request's server (the SDK builds an Ajv instance per server otherwise,
 * which costs more than the rest of a stateless request; the server uses it for elicitation only).
 */
const validator = new AjvJsonSchemaValidator();

/** A tool's failure as MCP's error result: the REST error body's status and message, nothing else. */
function toolError(ctx: AppContext, err: unknown): CallToolResult {
  const mapped = mapError(err);
  if (mapped.status >= 500) ctx.state.log.error({ err }, 'AI-agent tool failed');
  const body = { statusCode: mapped.status, message: mapped.message, correlationId: ctx.state.correlationId };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/**
 * A resource list's or read's failure as a JSON-RPC error naming the REST status and message: an unexpected
 * failure is `500 internal server error` (logged with the correlation id), never its own message (a driver's
 * error may quote SQL).
 */
export function resourceError(ctx: AppContext, err: unknown): McpError {
  if (err instanceof McpError) return err;
  const mapped = mapError(err);
  if (mapped.status >= 500) ctx.state.log.error({ err }, 'AI-agent resource read failed');
  const message = Array.isArray(mapped.message) ? mapped.message.join('; ') : mapped.message;
  // -32002: the MCP specification's "resource not found"
  return new McpError(
    mapped.status === 404 ? -32002 : ErrorCode.InvalidRequest,
    `${mapped.status} ${message}`,
    {
      statusCode: mapped.status,
      message: mapped.message,
    },
  );
}

function buildServer(ctx: AppContext): Server {
  const server = new Server(MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    jsonSchemaValidator: validator,
    instructions:
      'Spreadsheet files, their versions, reports, comparisons, quality rules and the plan of one company. ' +
      'The tools offered depend on the API key scopes (or the role of a signed-in person).',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: toolsFor(ctx).map((tool) => ({
      name: tool.entry.name,
      description: tool.entry.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
      annotations: { readOnlyHint: tool.spec.method === 'get', destructiveHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = resolveTools(ctx.routeTable).get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    ctx.state.log.debug({ tool: tool.entry.name }, 'AI-agent tool call');
    try {
      const result = await runTool(ctx, tool, request.params.arguments ?? {});
      return {
        structuredContent: result as Record<string, unknown>,
        content: [{ type: 'text', text: JSON.stringify(result) }],
      };
    } catch (err) {
      return toolError(ctx, err);
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    try {
      return await listResources(ctx, request.params?.cursor);
    } catch (err) {
      throw resourceError(ctx, err);
    }
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      return await readResource(ctx, request.params.uri);
    } catch (err) {
      throw resourceError(ctx, err);
    }
  });
  return server;
}

/** The headers the transport reads (content negotiation and the protocol version). */
const FORWARDED = ['accept', 'content-type', 'mcp-protocol-version', 'last-event-id'];

/**
 * One MCP HTTP request: its JSON-RPC message (or batch) through a fresh stateless server. A refusal by the
 * transport itself (a missing Accept, a bad protocol version, not JSON-RPC) is answered with the service's
 * error body and the transport's status and message.
 */
export async function handleMcp(ctx: AppContext, body: unknown): Promise<Reply> {
  const server = buildServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = ctx.get(name);
      if (value) headers.set(name, value);
    }
    const response = await transport.handleRequest(
      new Request(`http://mcp.invalid${ctx.path}`, { method: 'POST', headers }),
      { parsedBody: body },
    );
    const text = await response.text();
    if (response.status >= 400) {
      let message = response.statusText || 'bad request';
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON: keep the status text
      }
      throw new AppError(response.status, message);
    }
    if (!text) return { status: response.status };
    // the transport's JSON, as it wrote it
    return { status: response.status, headers: { 'Content-Type': 'application/json' }, body: text };
  } finally {
    await server.close();
  }
}
