/** An MCP client (the SDK's own) connected over real HTTP to the test app's /mcp, with a key or a session. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { testEnv } from './env';
import { randomClientAddress } from './http';

export interface McpConnection {
  client: Client;
  /** every HTTP answer the transport received, in order (status and headers) */
  answers: Array<{ status: number; headers: Headers; method: string }>;
  close(): Promise<void>;
}

export async function connectMcp(
  token: string,
  options: { baseUrl?: string; ip?: string } = {},
): Promise<McpConnection> {
  const answers: McpConnection['answers'] = [];
  const transport = new StreamableHTTPClientTransport(
    new URL(`${options.baseUrl ?? testEnv().baseUrl}/mcp`),
    {
      requestInit: {
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': options.ip ?? randomClientAddress() },
      },
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        answers.push({ status: res.status, headers: res.headers, method: init?.method ?? 'GET' });
        return res;
      },
    },
  );
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport);
  return { client, answers, close: () => client.close() };
}

/** The JSON error body inside a tool's error result. */
export function toolErrorOf(answer: unknown): {
  statusCode: number;
  message: string | string[];
} {
  const result = answer as { isError?: boolean; content?: unknown };
  if (!result.isError) throw new Error(`expected a tool error, got ${JSON.stringify(result)}`);
  const content = result.content as Array<{ type: string; text: string }>;
  return JSON.parse(content[0].text) as { statusCode: number; message: string | string[] };
}

/** A tool's structured answer (fails on a tool error); the text fallback must carry the same JSON. */
export async function tool(
  mcp: McpConnection,
  name: string,
  args: Record<string, unknown> = {},
): Promise<any> {
  const result = await mcp.client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  const text = (result.content as Array<{ text: string }>)[0].text;
  expect(JSON.parse(text)).to.deep.equal(result.structuredContent);
  return result.structuredContent;
}

/** The JSON error body of a tool call that must fail. */
export async function toolError(mcp: McpConnection, name: string, args: Record<string, unknown> = {}) {
  return toolErrorOf(await mcp.client.callTool({ name, arguments: args }));
}
