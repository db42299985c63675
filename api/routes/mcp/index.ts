import { handleMcp } from '../../mcp/server';
import { mcpBodyLimitBytes } from '../../mcp/tools';
import { route } from '../../routing';

export const mcpRoutes = [
  route({
    method: 'post',
    path: '/mcp',
    summary:
      'The AI-agent endpoint: Model Context Protocol over Streamable HTTP (stateless, JSON answers; protocol versions 2024-11-05 to 2025-11-25). Needs an API key with the `mcp` scope (the tools offered follow its other scopes) or a session (the tools follow the role; a demo session gets the read tools). Each HTTP request spends one unit of the request budget, whatever it carries (a JSON-RPC batch counts once). The body is limited to the base64 size of MCP_UPLOAD_MAX_BYTES (10 MB by default) plus 64 KB: 413 before it is read. See README "AI-agent endpoint".',
    tag: 'AI agent',
    access: { roles: ['admin', 'employee'], keyScope: 'mcp', demoAllowed: true },
    bodyLimitBytes: mcpBodyLimitBytes,
    body: {
      anyOf: [{ type: 'object' }, { type: 'array' }],
      description: 'a JSON-RPC 2.0 message (or a batch, for protocol versions that allow one)',
    },
    responses: {
      200: {
        description:
          'the JSON-RPC answer (a tool refusal is a result with isError and the REST status and message)',
        schema: { anyOf: [{ type: 'object' }, { type: 'array' }] },
      },
      202: { description: 'a notification or a response, accepted' },
      403: { description: 'an API key without the `mcp` scope, or a suspended company' },
      406: { description: 'the Accept header does not take application/json and text/event-stream' },
      413: { description: 'the body is over the /mcp limit' },
    },
    handler: async (ctx, { body }: { body: unknown }) => handleMcp(ctx, body),
  }),
];
