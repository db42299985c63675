import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import pino from 'pino';
import { createApp } from '../../api/app';
import { route } from '../../api/routing';
import { createStorage } from '../../common/storage';
import { loadConfig } from '../../common/config';
import { call, expectErrorBody, readResponse } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { csv, uploadFile } from '../helpers/files';

describe('API error body and request handling', () => {
  it('answers an unknown route with 404 and the error body', async () => {
    const res = await call('GET', '/no-such-thing');
    const body = expectErrorBody(res, 404);
    expect(body.message).to.equal('no route for GET /no-such-thing');
  });

  it('answers Cache-Control: no-store (tokens, keys, profiles), errors included; the docs page files are cacheable', async () => {
    const team = await createTeam({ plan: 'premium' });
    const login = await call('POST', '/auth/login', {
      json: { email: team.admin.email, password: team.admin.password },
    });
    expect(login.status, login.text).to.equal(200);
    const key = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'k', scopes: ['files:read'] },
    });
    expect(key.status, key.text).to.equal(201);
    const answers = [
      login,
      key,
      await call('GET', '/files', { token: team.adminToken }),
      await call('GET', '/no-such-thing'),
      await call('GET', '/files'),
    ];
    for (const res of answers)
      expect(res.headers.get('cache-control'), String(res.status)).to.equal('no-store');
    const css = await call('GET', '/docs/swagger-ui.css');
    expect(css.status).to.equal(200);
    expect(css.headers.get('cache-control')).to.equal('public, max-age=3600');
  });

  it('answers malformed JSON with 400', async () => {
    const res = await call('POST', '/_test/echo', {
      raw: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(expectErrorBody(res, 400).message).to.equal('malformed JSON body');
    // valid JSON that is not an object is not called malformed
    for (const raw of ['null', '"text"', '42', 'true']) {
      const other = await call('POST', '/_test/echo', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(expectErrorBody(other, 400).message, raw).to.equal('the request body must be a JSON object');
    }
    const list = await call('POST', '/_test/echo', {
      raw: '[]',
      headers: { 'content-type': 'application/json' },
    });
    expect(expectErrorBody(list, 400).message).to.equal('body must be object');
  });

  it('answers an unknown query parameter with 400 naming it', async () => {
    const res = await call('GET', '/health?verbose=1');
    expect(expectErrorBody(res, 400).message).to.equal('unknown query parameter "verbose"');
  });

  it('answers a query parameter given twice with 400 saying so', async () => {
    const res = await call('POST', '/_test/echo?verbose=true&verbose=false', { json: { name: 'a' } });
    expect(expectErrorBody(res, 400).message).to.equal('query parameter "verbose" is given more than once');
    // with another mistake, both are listed
    const two = await call('POST', '/_test/echo?verbose=1&verbose=2', { json: { name: 'a' } });
    expect(expectErrorBody(two, 400).message).to.deep.equal([
      'query parameter "verbose" is given more than once',
      'query.verbose must be boolean',
    ]);
  });

  it('answers a query parameter named __proto__ or constructor with 400 too', async () => {
    for (const name of ['__proto__', 'constructor']) {
      const res = await call('GET', `/health?${name}=1`);
      expect(expectErrorBody(res, 400).message).to.equal(`unknown query parameter "${name}"`);
    }
    const listed = await call('POST', `/_test/echo?__proto__=x`, { json: { name: 'a' } });
    expect(expectErrorBody(listed, 400).message).to.equal('unknown query parameter "__proto__"');
  });

  it('answers an unknown body field with 400 naming it', async () => {
    const res = await call('POST', '/_test/echo', { json: { name: 'a', color: 'red' } });
    expect(expectErrorBody(res, 400).message).to.equal('body: unknown field "color"');
  });

  it('lists every mistake when there are several', async () => {
    const res = await call('POST', '/_test/echo?verbose=maybe', {
      json: { name: 'far too long a name', count: 0, x: 1 },
    });
    const { message } = expectErrorBody(res, 400);
    expect(message).to.be.an('array').with.lengthOf(4);
    expect(message).to.include.members([
      'query.verbose must be boolean',
      'body.name must NOT have more than 10 characters',
      'body.count must be >= 1',
      'body: unknown field "x"',
    ]);
  });

  it('names a missing required field', async () => {
    const res = await call('POST', '/_test/echo', { json: {} });
    expect(expectErrorBody(res, 400).message).to.equal('body.name is required');
  });

  it('accepts a valid request and coerces query values', async () => {
    const res = await call('POST', '/_test/echo?verbose=true', { json: { name: 'ok', count: 2 } });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ body: { name: 'ok', count: 2 }, query: { verbose: true }, params: {} });
  });

  it('refuses a body over the size limit with 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(testEnv().config.jsonBodyLimitBytes + 10) });
    const res = await call('POST', '/_test/echo', {
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(res, 413);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await call('POST', '/_test/echo', {
      raw: 'name=a',
      headers: { 'content-type': 'text/plain' },
    });
    expectErrorBody(res, 415);
  });

  it('refuses a body sent chunked (no Content-Length) that is not JSON with 415, as it does one with a length', async () => {
    const chunked = (body: string, headers: Record<string, string>) =>
      fetch(`${testEnv().baseUrl}/_test/echo`, {
        method: 'POST',
        headers,
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(Buffer.from(body));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit).then(readResponse);
    // a text body, and a JSON text without a Content-Type: neither is read as an empty body
    const text = await chunked('name=a', { 'content-type': 'text/plain' });
    expect(expectErrorBody(text, 415).message).to.equal('unsupported content type');
    const untyped = await chunked('{"name":"a"}', {});
    expect(expectErrorBody(untyped, 415).message).to.equal('unsupported content type');
    // chunked JSON declared as such is read
    const json = await chunked('{"name":"a"}', { 'content-type': 'application/json' });
    expect(json.status).to.equal(200);
  });

  it('answers a known path with the wrong method with 405 and the error body', async () => {
    const res = await call('DELETE', '/health');
    expectErrorBody(res, 405);
  });

  it('hides internals behind a generic 500 and logs the stack with the correlation id', async () => {
    const res = await call('GET', '/_test/boom', { headers: { 'X-Request-Id': 'req-boom-12345' } });
    const body = expectErrorBody(res, 500);
    expect(body.message).to.equal('internal server error');
    expect(res.text).not.to.include('secret');
    expect(res.headers.get('x-request-id')).to.equal('req-boom-12345');
  });

  it('logs a 500 once with the stack and the correlation id, the id written once', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const { deps } = testEnv();
    const boom = route({
      method: 'get',
      path: '/_test/log-boom',
      summary: 'test only',
      tag: 'Test',
      access: { public: true },
      responses: { 500: { description: 'always fails' } },
      handler: () => Promise.reject(new Error('boom for the log')),
    });
    const app = createApp({ ...deps, logger: pino({ level: 'error' }, sink) }, { extraRoutes: [boom] });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await call('GET', '/_test/log-boom', {
        baseUrl,
        headers: { 'X-Request-Id': 'req-log-12345' },
      });
      expectErrorBody(res, 500);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const failed = lines.filter((line) => line.includes('"request failed"'));
    expect(failed).to.have.lengthOf(1);
    expect(failed[0].match(/"correlationId"/g)).to.have.lengthOf(1);
    const entry = JSON.parse(failed[0]) as { correlationId: string; err: { stack: string } };
    expect(entry.correlationId).to.equal('req-log-12345');
    expect(entry.err.stack).to.include('boom for the log');
  });

  it('refuses blank names and comments (only white space) with 400 naming each field', async () => {
    const team = await createTeam({ plan: 'premium' });
    const token = team.adminToken;
    const up = await uploadFile(csv(2), { token });
    expect(up.status, up.text).to.equal(201);
    const cases: Array<[string, string, unknown, string[]]> = [
      [
        'POST',
        '/auth/register',
        { companyName: '  ', name: '\t\n', email: 'blank@example.test', password: 'a long enough password' },
        ['body.companyName must not be blank', 'body.name must not be blank'],
      ],
      ['POST', '/api-keys', { name: '   ', scopes: ['files:read'] }, ['body.name must not be blank']],
      ['PATCH', '/companies/me', { name: ' ' }, ['body.name must not be blank']],
      ['POST', `/files/${up.body.id}/comments`, { body: ' \n ' }, ['body.body must not be blank']],
      ['POST', '/rules', { name: '  ', kind: 'not_null', column: 'id' }, ['body.name must not be blank']],
    ];
    for (const [method, path, json, problems] of cases) {
      const res = await call(method, path, { token: path === '/auth/register' ? undefined : token, json });
      const body = expectErrorBody(res, 400);
      const said = ([] as string[]).concat(body.message);
      expect(said, `${method} ${path}`).to.include.members(problems);
    }
    // a name with white space around other characters is a name
    const ok = await call('POST', '/api-keys', {
      token,
      json: { name: ' nightly ', scopes: ['files:read'] },
    });
    expect(ok.status, ok.text).to.equal(201);
  });

  describe('correlation id', () => {
    it('takes a well-formed X-Request-Id and echoes it', async () => {
      const res = await call('GET', '/nope', { headers: { 'X-Request-Id': 'client-abc-123' } });
      expect(res.headers.get('x-request-id')).to.equal('client-abc-123');
      expect(expectErrorBody(res, 404)).to.have.property('correlationId', 'client-abc-123');
    });

    it('replaces a malformed X-Request-Id with a generated one', async () => {
      const res = await call('GET', '/health', {
        headers: { 'X-Request-Id': 'bad id with spaces <script>' },
      });
      const id = res.headers.get('x-request-id');
      expect(id).to.match(/^[0-9a-f-]{36}$/);
    });

    it('generates one when none is given', async () => {
      const a = await call('GET', '/health');
      const b = await call('GET', '/health');
      expect(a.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      expect(a.headers.get('x-request-id')).not.to.equal(b.headers.get('x-request-id'));
    });
  });
});

describe('GET /health and GET /ready', () => {
  it('/health answers 200', async () => {
    const res = await call('GET', '/health');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('/ready answers 200 naming the three dependencies', async () => {
    const res = await call('GET', '/ready');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.equal('ready');
    expect(res.body.checks).to.deep.equal({
      postgres: { status: 'up' },
      temporal: { status: 'up' },
      minio: { status: 'up' },
    });
  });

  it('/ready answers 503 naming the dependency that is down', async () => {
    const { deps } = testEnv();
    // same app, but MinIO pointed at a closed port on loopback
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const storage = createStorage(loadConfig({ ...process.env, S3_ENDPOINT: `http://127.0.0.1:${port}` }));
    const app = createApp({ ...deps, storage });
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ready`);
      const body = (await res.json()) as Record<string, any>;
      expect(res.status).to.equal(503);
      expect(body.statusCode).to.equal(503);
      expect(body.message).to.equal('not ready: minio down');
      expect(body.checks.postgres).to.deep.equal({ status: 'up' });
      expect(body.checks.temporal).to.deep.equal({ status: 'up' });
      expect(body.checks.minio.status).to.equal('down');
      expect(body.correlationId).to.equal(res.headers.get('x-request-id'));
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
