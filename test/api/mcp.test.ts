import http from 'node:http';
import { expect } from 'chai';
import { periodKey } from '../../domain/plans/plans';
import type { Scope } from '../../domain/identity/scopes';
import { startWorker, testEnv } from '../helpers/env';
import { createApiKey, createPerson, createTeam, signIn, tokenFor } from '../helpers/factories';
import { csv, uploadFile, uploadTo } from '../helpers/files';
import { call, expectErrorBody, randomClientAddress } from '../helpers/http';
import { connectMcp, tool, toolError, type McpConnection } from '../helpers/mcp';
import { startApp } from '../helpers/servers';
import type { AppContext } from '../../api/context';
import { resourceError } from '../../api/mcp/server';
import { NotFoundError } from '../../common/errors';
import { eventually } from '../helpers/temporal';

const READ_TOOLS = [
  'list_files',
  'get_file',
  'list_versions',
  'get_version',
  'preview_version',
  'get_download_link',
  'get_report',
  'get_latest_report',
  'get_version_comparison',
  'get_comparison',
  'list_comparison_changes',
  // POST /comparisons is a files:read route in the route table: the tool follows it
  'request_comparison',
  'list_rules',
  'get_rule',
  'get_plan_and_quota',
  'list_comments',
];
const WRITE_TOOLS = ['upload_file', 'upload_version', 'change_visibility', 'rebuild_report'];
const BILLING_TOOLS = ['get_running_bill', 'list_invoices', 'get_invoice', 'get_invoice_document_link'];
const NOTIFICATION_READ_TOOLS = ['list_notifications', 'get_unread_notification_count'];
// POST /notifications/:id/read and /read-all are notifications:read routes: the demo refuses them (writes)
const NOTIFICATION_TOOLS = [
  ...NOTIFICATION_READ_TOOLS,
  'mark_notification_read',
  'mark_all_notifications_read',
];
const AUDIT_TOOLS = ['search_audit_log'];
/** every scope that opens a tool, with rules:write (which opens none) */
const EVERY_MCP_SCOPE: Scope[] = [
  'mcp',
  'files:read',
  'files:write',
  'notifications:read',
  'billing:read',
  'audit:read',
  'rules:write',
];

async function toolNames(mcp: McpConnection): Promise<string[]> {
  return (await mcp.client.listTools()).tools.map((t) => t.name).sort();
}

const base64 = (data: string | Buffer) => Buffer.from(data).toString('base64');

/** Sends a POST /mcp whose Content-Length announces `announced` bytes but only writes the first KB. */
function postAnnouncing(baseUrl: string, token: string, announced: number) {
  return new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': String(announced),
        'x-forwarded-for': randomClientAddress(),
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: JSON.parse(Buffer.concat(chunks).toString()),
        });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload_file","arguments":{"fileName":"a.csv","contentBase64":"' +
        'QUFB'.repeat(256),
    );
    // the rest is never sent: the answer must come before the body is read whole
  });
}

describe('AI-agent endpoint (/mcp)', function () {
  this.timeout(120_000);

  it('offers exactly the tools the key scopes (or the session role) open', async () => {
    const team = await createTeam({ plan: 'premium' });
    const table: Array<[Scope[], string[]]> = [
      [['mcp'], []],
      [['mcp', 'files:read'], READ_TOOLS],
      [['mcp', 'files:write'], WRITE_TOOLS],
      [
        ['mcp', 'files:read', 'files:write'],
        [...READ_TOOLS, ...WRITE_TOOLS],
      ],
      [['mcp', 'billing:read'], BILLING_TOOLS],
      [['mcp', 'notifications:read'], NOTIFICATION_TOOLS],
      [['mcp', 'audit:read'], AUDIT_TOOLS],
      [
        ['mcp', 'notifications:read', 'billing:read', 'audit:read', 'rules:write'],
        [...BILLING_TOOLS, ...NOTIFICATION_TOOLS, ...AUDIT_TOOLS],
      ],
      [
        EVERY_MCP_SCOPE,
        [...READ_TOOLS, ...WRITE_TOOLS, ...BILLING_TOOLS, ...NOTIFICATION_TOOLS, ...AUDIT_TOOLS],
      ],
    ];
    for (const [scopes, expected] of table) {
      const mcp = await connectMcp(await createApiKey(team.admin, scopes));
      expect(await toolNames(mcp), scopes.join(' ')).to.deep.equal([...expected].sort());
      await mcp.close();
    }
    // a session: everything its role opens (the audit log and billing: admins); a demo session: the read tools
    const session = await connectMcp(team.employeeToken);
    expect(await toolNames(session)).to.deep.equal(
      [...READ_TOOLS, ...WRITE_TOOLS, ...NOTIFICATION_TOOLS].sort(),
    );
    await session.close();
    const adminSession = await connectMcp(team.adminToken);
    expect(await toolNames(adminSession)).to.deep.equal(
      [...READ_TOOLS, ...WRITE_TOOLS, ...BILLING_TOOLS, ...NOTIFICATION_TOOLS, ...AUDIT_TOOLS].sort(),
    );
    await adminSession.close();
    const demo = await connectMcp((await signIn(team.admin, { demo: true })).accessToken);
    // (request_comparison is a POST: the demo refuses every write)
    // (the demo signs in as an admin of the demo company: its billing and audit log are readable as over
    // REST; marking notifications read is a POST: refused)
    expect(await toolNames(demo)).to.deep.equal(
      [
        ...READ_TOOLS.filter((n) => n !== 'request_comparison'),
        ...BILLING_TOOLS,
        ...NOTIFICATION_READ_TOOLS,
        ...AUDIT_TOOLS,
      ].sort(),
    );
    const refused = await toolError(demo, 'upload_file', {
      fileName: 'a.csv',
      contentBase64: base64(csv(1)),
    });
    expect(refused).to.deep.include({ statusCode: 403, message: 'the demo is read-only' });
    await demo.close();
  });

  it('403 with the error body for a key without the mcp scope; 401 without a caller', async () => {
    const team = await createTeam({ plan: 'premium' });
    const key = await createApiKey(team.admin, ['files:read', 'files:write']);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const res = await call('POST', '/mcp', { token: key, json: init, headers });
    expect(expectErrorBody(res, 403).message).to.equal('the API key lacks the scope mcp');
    expectErrorBody(await call('POST', '/mcp', { json: init, headers }), 401);
    // the transport's own refusals get the error body too (no Accept for the event stream: 406)
    const mcpKey = await createApiKey(team.admin, ['mcp']);
    const noAccept = await call('POST', '/mcp', {
      token: mcpKey,
      json: init,
      headers: { accept: 'application/json' },
    });
    expectErrorBody(noAccept, 406);
    expectErrorBody(await call('GET', '/mcp', { token: mcpKey }), 405);
    const notJsonRpc = await call('POST', '/mcp', { token: mcpKey, json: { hello: 'world' }, headers });
    expectErrorBody(notJsonRpc, 400);
  });

  describe('with a worker', () => {
    let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
    before(async () => {
      worker = await startWorker();
    });
    after(async () => worker?.stop());

    it('every tool answers as its REST route does, for the same call', async () => {
      const team = await createTeam({ plan: 'premium' });
      const key = await createApiKey(team.employee, ['mcp', 'files:read', 'files:write']);
      const mcp = await connectMcp(key);
      const get = async (path: string) => {
        const res = await call('GET', path, { token: key });
        expect(res.status, `${path}: ${res.text}`).to.equal(200);
        return res.body;
      };

      const uploaded = await tool(mcp, 'upload_file', {
        fileName: 'sales.csv',
        contentBase64: base64('region,amount\nnorth,10\nsouth,20\n'),
        visibility: 'company',
      });
      const id = uploaded.id as string;
      expect(uploaded).to.include({ originalName: 'sales.csv', visibility: 'company', currentVersion: 1 });
      expect(uploaded.version).to.deep.equal(await get(`/files/${id}/versions/1`));
      const { version: _v, ...file } = uploaded;
      expect(file).to.deep.equal(await get(`/files/${id}`));
      const v2 = await tool(mcp, 'upload_version', {
        id,
        fileName: 'sales.csv',
        contentBase64: base64('region,amount\nnorth,10\nsouth,25\n'),
      });
      expect(v2).to.deep.equal(await get(`/files/${id}/versions/2`));

      expect(await tool(mcp, 'list_files', { limit: 20 })).to.deep.equal(await get('/files?limit=20'));
      expect(await tool(mcp, 'get_file', { id })).to.deep.equal(await get(`/files/${id}`));
      expect(await tool(mcp, 'list_versions', { id })).to.deep.equal(await get(`/files/${id}/versions`));
      expect(await tool(mcp, 'get_version', { id, version: 1 })).to.deep.equal(
        await get(`/files/${id}/versions/1`),
      );
      expect(await tool(mcp, 'preview_version', { id, version: 2, rows: 1 })).to.deep.equal(
        await get(`/files/${id}/versions/2/preview?rows=1`),
      );
      const link = await tool(mcp, 'get_download_link', { id, version: 1, expiresIn: 60 });
      expect(link.expiresIn).to.equal(60);
      expect(Object.keys(link).sort()).to.deep.equal(
        Object.keys(await get(`/files/${id}/versions/1/download-link?expiresIn=60`)).sort(),
      );
      expect((await fetch(link.url)).status).to.equal(200);

      // reports and the automatic comparison, once the worker has finished them
      await eventually(async () => (await get(`/files/${id}/versions/2/report`)).status === 'ready', {
        timeoutMs: 60_000,
        what: 'report ready',
      });
      expect(await tool(mcp, 'get_report', { id, version: 2 })).to.deep.equal(
        await get(`/files/${id}/versions/2/report`),
      );
      expect(await tool(mcp, 'get_latest_report', { id })).to.deep.equal(await get(`/files/${id}/report`));
      const automatic = await eventually(
        async () => {
          const c = await get(`/files/${id}/versions/2/comparison`);
          return c.status === 'ready' ? c : undefined;
        },
        { timeoutMs: 60_000, what: 'comparison ready' },
      );
      expect(await tool(mcp, 'get_version_comparison', { id, version: 2 })).to.deep.equal(automatic);
      expect(await tool(mcp, 'get_comparison', { id: automatic.id })).to.deep.equal(
        await get(`/comparisons/${automatic.id}`),
      );
      expect(await tool(mcp, 'list_comparison_changes', { id: automatic.id })).to.deep.equal(
        await get(`/comparisons/${automatic.id}/changes`),
      );
      const requested = await tool(mcp, 'request_comparison', {
        base: { fileId: id, version: 1 },
        target: { fileId: id, version: 2 },
        keyColumns: ['region'],
      });
      expect(requested).to.include({ status: 'queued', automatic: false });
      expect(requested).to.deep.equal({ ...(await get(`/comparisons/${requested.id}`)), ...requested });

      // version 1's own build must be over first (a rebuild while it runs is a 409, as over REST)
      await eventually(
        async () => ['ready', 'failed'].includes((await get(`/files/${id}/versions/1/report`)).status),
        { timeoutMs: 60_000, what: 'report of version 1 done' },
      );
      const rebuilt = await tool(mcp, 'rebuild_report', { id, version: 1 });
      expect(rebuilt.status).to.equal('queued');
      // a second rebuild while the first is queued: 409 as in REST
      const again = await toolError(mcp, 'rebuild_report', { id, version: 1 });
      const restAgain = await call('POST', `/files/${id}/versions/1/report/rebuild`, { token: key });
      expect(again).to.deep.include({ statusCode: 409, message: expectErrorBody(restAgain, 409).message });

      const rule = await call('POST', '/rules', {
        token: team.adminToken,
        json: { name: 'short codes', kind: 'length', column: 'region', params: { max: 5 } },
      });
      expect(rule.status, rule.text).to.equal(201);
      expect(await tool(mcp, 'list_rules')).to.deep.equal(await get('/rules'));
      expect(await tool(mcp, 'get_rule', { id: rule.body.id })).to.deep.equal(
        await get(`/rules/${rule.body.id}`),
      );
      expect(await tool(mcp, 'get_plan_and_quota')).to.deep.equal(await get('/subscriptions/me'));

      const hidden = await tool(mcp, 'change_visibility', { id, visibility: 'private' });
      expect(hidden.visibility).to.equal('private');
      expect(hidden).to.deep.equal(await get(`/files/${id}`));

      // a bad argument: the REST validation message
      const bad = await toolError(mcp, 'get_version', { id, version: 0 });
      const restBad = await call('GET', `/files/${id}/versions/0`, { token: key });
      expect(bad).to.deep.include({ statusCode: 400, message: expectErrorBody(restBad, 400).message });

      // resources: the visible reports and comparisons, read as the REST routes answer
      const listed = (await mcp.client.listResources()).resources.map((r) => r.uri);
      expect(listed).to.include.members([
        `report://${id}/v1`,
        `report://${id}/v2`,
        `comparison://${automatic.id}`,
      ]);
      const read = await mcp.client.readResource({ uri: `report://${id}/v2` });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).to.deep.equal(
        await get(`/files/${id}/versions/2/report`),
      );
      const readComparison = await mcp.client.readResource({ uri: `comparison://${automatic.id}` });
      expect(JSON.parse((readComparison.contents[0] as { text: string }).text)).to.deep.equal(
        await get(`/comparisons/${automatic.id}`),
      );
      const templates = await mcp.client.listResourceTemplates();
      expect(templates.resourceTemplates.map((t) => t.uriTemplate)).to.deep.equal([
        'report://{fileId}/v{version}',
        'comparison://{comparisonId}',
      ]);

      // audited as the key, via the AI-agent endpoint
      const audit = await testEnv()
        .knex('auditLog')
        .where({ resourceId: id, action: 'file.uploaded' })
        .first();
      expect(audit.actorApiKeyId).to.be.a('string');
      expect(audit.actorPersonId).to.equal(team.employee.id);
      expect(audit.details).to.include({ via: 'ai-agent' });
      await mcp.close();
    });
  });

  it('visibility: another company’s file and another employee’s private file are not found', async () => {
    const a = await createTeam({ plan: 'premium' });
    const b = await createTeam({ plan: 'premium' });
    const colleague = await createPerson(a.company, { role: 'employee' });
    const theirs = await uploadFile(csv(2), { token: b.adminToken, visibility: 'company' });
    const privateOfColleague = await uploadFile(csv(2), { token: await tokenFor(colleague) });
    const shared = await uploadFile(csv(2), { token: a.adminToken, visibility: 'company' });
    const key = await createApiKey(a.employee, ['mcp', 'files:read', 'files:write']);
    const mcp = await connectMcp(key);
    for (const id of [theirs.body.id, privateOfColleague.body.id]) {
      const rest = await call('GET', `/files/${id}`, { token: key });
      const { message } = expectErrorBody(rest, 404);
      expect(await toolError(mcp, 'get_file', { id })).to.deep.include({ statusCode: 404, message });
      expect((await toolError(mcp, 'get_report', { id, version: 1 })).statusCode).to.equal(404);
      expect(
        (await toolError(mcp, 'upload_version', { id, fileName: 'x.csv', contentBase64: base64(csv(1)) }))
          .statusCode,
      ).to.equal(404);
      const err = await mcp.client.readResource({ uri: `report://${id}/v1` }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(String(err?.message)).to.include('404');
    }
    const listed = await tool(mcp, 'list_files', { limit: 20 });
    expect(listed.data.map((f: { id: string }) => f.id)).to.deep.equal([shared.body.id]);
    const resources = (await mcp.client.listResources()).resources.map((r) => r.uri);
    expect(resources.every((uri) => uri.includes(shared.body.id))).to.equal(true);
    await mcp.close();
  });

  it('rule 12: no tool writes comments or manages keys, webhooks, people or plans; a missing scope is refused as in REST', async () => {
    const team = await createTeam({ plan: 'premium' });
    const all = await createApiKey(team.admin, EVERY_MCP_SCOPE);
    const mcp = await connectMcp(all);
    const names = await toolNames(mcp);
    // reading comments is a files:read tool (list_comments); nothing adds, edits or deletes one
    expect(names).to.include('list_comments');
    for (const forbidden of [
      /(add|create|post|write|edit|update|delete|remove)_?comment/,
      /key/,
      /webhook/,
      /person|people|invit/,
      /plan(?!_and_quota)|subscri/,
    ]) {
      expect(
        names.filter((n) => forbidden.test(n) && !/^get_plan_and_quota$/.test(n)),
        String(forbidden),
      ).to.deep.equal([]);
    }
    const unknown = await mcp.client.callTool({ name: 'create_api_key', arguments: {} }).then(
      (r) => r,
      (e: Error) => e,
    );
    expect(unknown instanceof Error ? unknown.message : JSON.stringify(unknown)).to.include('unknown tool');
    await mcp.close();

    // a key without files:write: the upload is refused with REST's 403
    const reader = await connectMcp(await createApiKey(team.employee, ['mcp', 'files:read']));
    const refused = await toolError(reader, 'upload_file', {
      fileName: 'a.csv',
      contentBase64: base64(csv(1)),
    });
    const rest = await uploadFile(csv(1), { token: await createApiKey(team.employee, ['files:read']) });
    expect(refused).to.deep.include({ statusCode: 403, message: expectErrorBody(rest, 403).message });
    await reader.close();
  });

  it('uploads: 413 before the body is read, 413 for a decoded file over the limit, 402, 409 and 400 as in REST', async () => {
    const server = await startApp({ config: { ...testEnv().config, mcp: { uploadMaxBytes: 1000 } } });
    const team = await createTeam({ plan: 'free' });
    const key = await createApiKey(team.admin, ['mcp', 'files:read', 'files:write']);
    // the body limit is base64(1000 bytes) + 64 KB; announcing far more is refused before reading
    const early = await postAnnouncing(server.baseUrl, key, 50 * 1024 * 1024);
    expect(early.status).to.equal(413);
    expect(early.body).to.include({ statusCode: 413 });
    expect(early.body.message).to.match(/request body too large/);
    expect(early.headers['x-ratelimit-remaining']).to.be.a('string');

    // on the default limit (10 MB decoded) a 2 MB file passes, over JSON_BODY_LIMIT_BYTES (1 MB)
    const premium = await createTeam({ plan: 'premium' });
    const writer = await connectMcp(await createApiKey(premium.admin, ['mcp', 'files:write']));
    const twoMb = csv(45_000, 8);
    expect(twoMb.length).to.be.greaterThan(2 * testEnv().config.jsonBodyLimitBytes);
    const saved = await tool(writer, 'upload_file', { fileName: 'two.csv', contentBase64: base64(twoMb) });
    expect(saved.version.sizeBytes).to.equal(Buffer.byteLength(twoMb));
    await writer.close();

    const mcp = await connectMcp(key, { baseUrl: server.baseUrl });
    const big = await toolError(mcp, 'upload_file', {
      fileName: 'big.csv',
      contentBase64: base64(csv(100, 5)),
    });
    expect(big.statusCode).to.equal(413);
    expect(big.message).to.match(/at most 1000 bytes/);
    // as in REST, a file the caller may not see is "not found" before the size is looked at
    const unseen = await toolError(mcp, 'upload_version', {
      id: '00000000-0000-4000-8000-000000000000',
      fileName: 'big.csv',
      contentBase64: base64(csv(100, 5)),
    });
    expect(unseen.statusCode).to.equal(404);
    const notSheet = await toolError(mcp, 'upload_file', {
      fileName: 'a.png',
      contentBase64: base64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d])),
    });
    expect(notSheet.statusCode).to.equal(400);
    const badBase64 = await toolError(mcp, 'upload_file', { fileName: 'a.csv', contentBase64: '!!!' });
    expect(badBase64.statusCode).to.equal(400);

    // versions: the free plan keeps 5
    const first = await tool(mcp, 'upload_file', { fileName: 'a.csv', contentBase64: base64(csv(2)) });
    for (let v = 2; v <= 5; v++) {
      await tool(mcp, 'upload_version', {
        id: first.id,
        fileName: 'a.csv',
        contentBase64: base64(csv(2, 3, `v${v}`)),
      });
    }
    const sixth = await toolError(mcp, 'upload_version', {
      id: first.id,
      fileName: 'a.csv',
      contentBase64: base64(csv(2)),
    });
    const restSixth = await uploadTo(`/files/${first.id}/versions`, csv(2), {
      token: key,
      baseUrl: server.baseUrl,
    });
    expect(sixth).to.deep.include({ statusCode: 409, message: expectErrorBody(restSixth, 409).message });

    // quota: the free plan's 10 uploads a period
    await testEnv()
      .knex('fileUsage')
      .insert({ companyId: team.company.id, periodKey: periodKey(), filesUsed: 10 })
      .onConflict(['companyId', 'periodKey'])
      .merge();
    const over = await toolError(mcp, 'upload_file', { fileName: 'a.csv', contentBase64: base64(csv(2)) });
    const restOver = await uploadFile(csv(2), { token: key, baseUrl: server.baseUrl });
    expect(over).to.deep.include({ statusCode: 402, message: expectErrorBody(restOver, 402).message });
    await mcp.close();
  });

  it('each MCP request spends the request budget (X-RateLimit-*); exhausted, 429 with Retry-After', async () => {
    const team = await createTeam({ plan: 'free' }); // 30 requests a minute for the company's keys
    const key = await createApiKey(team.admin, ['mcp', 'files:read']);
    // a JSON-RPC batch of two tool calls is one HTTP request: one unit
    const batch = () =>
      call('POST', '/mcp', {
        token: key,
        headers: { accept: 'application/json, text/event-stream' },
        json: [1, 2].map((id) => ({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'list_files', arguments: {} },
        })),
      });
    const first = await batch();
    expect(first.status, first.text).to.equal(200);
    expect(first.body.map((r: { id: number }) => r.id).sort()).to.deep.equal([1, 2]);
    expect(
      first.body.every((r: { result?: { isError?: boolean } }) => r.result && !r.result.isError),
    ).to.equal(true);
    expect(first.headers.get('x-ratelimit-remaining')).to.equal('29');
    expect((await batch()).headers.get('x-ratelimit-remaining')).to.equal('28');

    const mcp = await connectMcp(key);
    const remaining = () => mcp.answers.map((a) => Number(a.headers.get('x-ratelimit-remaining')));
    expect(mcp.answers.every((a) => a.headers.get('x-ratelimit-limit') === '30')).to.equal(true);
    const before = remaining();
    // each HTTP request (initialize, initialized, the event-stream probe) counted once, in order
    expect(before).to.deep.equal(before.map((_, i) => 27 - i));
    let refused: Error | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      refused = await mcp.client.callTool({ name: 'list_files', arguments: {} }).then(
        () => undefined,
        (e: Error) => e,
      );
    }
    expect(refused?.message).to.include('429');
    const last = mcp.answers[mcp.answers.length - 1];
    expect(last.status).to.equal(429);
    expect(last.headers.get('retry-after')).to.equal(last.headers.get('x-ratelimit-reset'));
    expect(mcp.answers.filter((a) => a.status !== 429)).to.have.lengthOf(28); // and the two batches
    await mcp.close().catch(() => undefined);
  });

  it('a revoked key stops working on the next MCP request', async () => {
    const team = await createTeam({ plan: 'premium' });
    const key = await createApiKey(team.employee, ['mcp', 'files:read']);
    const mcp = await connectMcp(key);
    await tool(mcp, 'list_files');
    const keyId = (await testEnv().knex('apiKeys').where({ personId: team.employee.id }).first()).id;
    const revoke = await call('DELETE', `/api-keys/${keyId}`, { token: team.employeeToken });
    expect(revoke.status, revoke.text).to.equal(204);
    const after = await mcp.client.callTool({ name: 'list_files', arguments: {} }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(after?.message).to.include('401');
    expect(mcp.answers[mcp.answers.length - 1].status).to.equal(401);
    await mcp.close().catch(() => undefined);
  });
});

describe('AI-agent endpoint: failures of resource lists and reads', () => {
  it('an unexpected failure answers 500 internal server error, logged, never its own message', () => {
    const logged: unknown[] = [];
    const ctx = {
      state: { correlationId: 'corr-1', log: { error: (...args: unknown[]) => logged.push(args) } },
    } as unknown as AppContext;
    const err = resourceError(
      ctx,
      new Error('Knex: Timeout acquiring a connection. select * from "reports"'),
    );
    expect(err.message).to.not.include('Knex');
    expect(err.message).to.include('500 internal server error');
    expect(err.data).to.deep.equal({ statusCode: 500, message: 'internal server error' });
    expect(logged).to.have.length(1);
    // a refusal keeps its status and message
    const notFound = resourceError(ctx, new NotFoundError('report not found'));
    expect(notFound.code).to.equal(-32002);
    expect(notFound.data).to.deep.equal({ statusCode: 404, message: 'report not found' });
  });
});
