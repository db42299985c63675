import { expect } from 'chai';
import { call } from '../helpers/http';
import { createApiKey, createTeam } from '../helpers/factories';
import { csv, uploadFile } from '../helpers/files';
import { connectMcp } from '../helpers/mcp';

describe('AI-agent endpoint (/mcp)', function () {
  this.timeout(90_000);

  it('smoke: lists tools and files', async () => {
    const a = await createTeam({ plan: 'premium' });
    const key = await createApiKey(a.admin, ['mcp', 'files:read']);
    await uploadFile(csv(3), { token: a.adminToken });
    const mcp = await connectMcp(key);
    const tools = await mcp.client.listTools();
    console.log(tools.tools.map((t) => t.name));
    const result = await mcp.client.callTool({ name: 'list_files', arguments: { limit: 20 } });
    const rest = await call('GET', '/files?limit=20', { token: key });
    expect(result.structuredContent).to.deep.equal(rest.body);
    console.log(mcp.answers.map((x) => [x.method, x.status, x.headers.get('x-ratelimit-remaining')]));
    await mcp.close();
  });
});
