/**
 * Hardening (issue 10): inputs that used to answer 500 or bypass a bound. Table-driven over the route table
 * where the defect is a class (every string field, every numeric parameter, every method a path lacks), so a
 * new route is covered without a new test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import { createApp } from '../../api/app';
import { openApiPath } from '../../api/openapi';
import { routes } from '../../api/routes';
import type { JsonSchema, RouteSpec } from '../../api/routing';
import { createPerson, createTeam, tokenFor as sessionToken } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody, randomClientAddress, type HttpResponse } from '../helpers/http';
import { csv, multipart, uploadFile } from '../helpers/files';

type Team = Awaited<ReturnType<typeof createTeam>>;

const NUL = '\u0000';
const nulMessage = (at: string) => `${at} must not contain the NUL character (\\u0000)`;

function messages(res: HttpResponse): string[] {
  const { message } = expectErrorBody(res, 400);
  return Array.isArray(message) ? message : [message];
}

/** A concrete path for a route: every `:param` filled (a UUID, or 1 for a version). */
function concretePath(path: string, values: Record<string, string> = {}): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) =>
    name in values ? values[name] : name === 'version' ? '1' : name === 'asset' ? 'index.css' : randomUUID(),
  );
}

/** Any method, sent raw over HTTP (fetch refuses TRACE and friends). */
function rawRequest(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: Buffer | string; baseUrl?: string } = {},
): Promise<HttpResponse> {
  const base = new URL(options.baseUrl ?? testEnv().baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: { 'x-forwarded-for': randomClientAddress(), ...(options.headers ?? {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          }
          resolve({ status: res.statusCode ?? 0, headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Top-level properties of a schema that take a string. */
function stringFields(schema: JsonSchema | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, { type?: string | string[]; enum?: unknown[] }>;
  return Object.entries(props)
    .filter(([, s]) => {
      const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
      return types.includes('string') || (s.enum ?? []).some((v) => typeof v === 'string');
    })
    .map(([name]) => name);
}

/** Top-level properties of a schema that take an integer or a number. */
function numericFields(schema: JsonSchema | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, { type?: string | string[] }>;
  return Object.entries(props)
    .filter(([, s]) => {
      const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
      return types.includes('integer') || types.includes('number');
    })
    .map(([name]) => name);
}

const key = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;

describe('Hardening (issue 10)', function () {
  this.timeout(120_000);
  let team: Team;
  // the loops over every route take turns among several admins: one session's 300 a minute is not enough
  // for every field of every route
  let admins: string[] = [];
  let turn = 0;
  before(async () => {
    team = await createTeam();
    admins = [team.adminToken];
    for (let i = 0; i < 5; i++)
      admins.push(await sessionToken(await createPerson(team.company, { role: 'admin' })));
  });

  const tokenFor = (r: RouteSpec) => (r.access.public ? undefined : admins[turn++ % admins.length]);

  describe('1. the NUL character in any string', () => {
    it('answers 400 naming the field, for every string field of every route body', async () => {
      const checked: string[] = [];
      for (const r of routes.filter((x) => x.body)) {
        for (const field of stringFields(r.body)) {
          const res = await call(r.method.toUpperCase(), concretePath(r.path), {
            token: tokenFor(r),
            json: { [field]: `a${NUL}b` },
          });
          expect(messages(res), `${key(r)} ${field}`).to.include(nulMessage(`body.${field}`));
          checked.push(`${key(r)} ${field}`);
        }
      }
      // the examples of the issue are among them
      expect(checked).to.include.members([
        'POST /api-keys name',
        'PATCH /companies/me name',
        'POST /invitations email',
        'POST /invitations name',
        'POST /auth/register companyName',
      ]);
    });

    it('answers 400 for a NUL in a complete, otherwise valid body (the example of the issue)', async () => {
      const res = await call('POST', '/api-keys', {
        token: team.adminToken,
        json: { name: `a${NUL}b`, scopes: ['files:read'] },
      });
      expect(messages(res)).to.deep.equal([nulMessage('body.name')]);
      const reg = await call('POST', '/auth/register', {
        json: {
          companyName: 'Acme',
          name: `Ann${NUL}`,
          email: `nul-${randomUUID().slice(0, 8)}@example.test`,
          password: 'a long enough password 1',
        },
      });
      expect(messages(reg)).to.deep.equal([nulMessage('body.name')]);
    });

    it('names a NUL nested in arrays and objects, and in object keys', async () => {
      const res = await call('PATCH', `/outgoing-webhooks/${randomUUID()}`, {
        token: team.adminToken,
        json: { events: ['file.uploaded', `x${NUL}`] },
      });
      expect(messages(res)).to.include(nulMessage('body.events[1]'));
      const keyed = await call('POST', '/_test/echo', { json: { name: 'a', [`k${NUL}`]: 1 } });
      expect(messages(keyed)).to.include(nulMessage('body (a field name)'));
    });

    it('answers 400 for a NUL in a query string or a path parameter', async () => {
      const q = await call('GET', '/files?cursor=ab%00cd', { token: team.adminToken });
      expect(messages(q)).to.include(nulMessage('query.cursor'));
      const cb = await call('GET', '/auth/oauth/google/callback?state=a%00b&other=c%00');
      expect(messages(cb)).to.include.members([nulMessage('query.state'), nulMessage('query.other')]);
      const p = await call('GET', '/docs/a%00b');
      expect(messages(p)).to.include(nulMessage('path.asset'));
    });

    it('answers 400 for a NUL in a multipart form field or file name of an upload', async () => {
      const field = multipart([
        { name: 'visibility', data: `company${NUL}` },
        { name: 'file', filename: 'a.csv', contentType: 'text/csv', data: csv(2) },
      ]);
      const res = await call('POST', '/files', {
        token: team.adminToken,
        raw: field.body,
        headers: { 'content-type': field.contentType },
      });
      expect(messages(res)).to.include(nulMessage('form.visibility'));
      // busboy itself refuses a NUL in the part's header: still a 400, never a database error
      const named = await uploadFile(csv(2), { token: team.adminToken, name: `bad${NUL}name.csv` });
      expectErrorBody(named, 400);
    });
  });

  describe('2 and 9. numeric query and path parameters', () => {
    const notPlainIntegers = [
      'Infinity',
      '-Infinity',
      '1e400',
      '-1e400',
      'NaN',
      '1.5',
      '1e1',
      '0x10',
      ' 5',
      '+5',
      '',
    ];

    it('answers 400 naming the parameter for anything but a plain integer, on every route', async () => {
      const checked: string[] = [];
      for (const r of routes) {
        const numeric = [
          ...numericFields(r.query).map((n) => ({ n, where: 'query' as const })),
          ...numericFields(r.params).map((n) => ({ n, where: 'path' as const })),
        ];
        for (const { n, where } of numeric) {
          for (const value of notPlainIntegers) {
            const path =
              where === 'path'
                ? concretePath(r.path, { [n]: encodeURIComponent(value) })
                : `${concretePath(r.path)}?${n}=${encodeURIComponent(value)}`;
            if (where === 'path' && value === '') continue; // an empty segment is another route
            const res = await call(r.method.toUpperCase(), path, { token: tokenFor(r) });
            expect(messages(res), `${key(r)} ${n}=${JSON.stringify(value)}`).to.include(
              `${where}.${n} must be integer`,
            );
          }
          checked.push(`${key(r)} ${where}.${n}`);
        }
      }
      expect(checked).to.include.members([
        'GET /files query.limit',
        'GET /api-keys query.limit',
        'GET /employees query.page',
        'GET /files/:id/versions/:version path.version',
      ]);
    });

    it('bounds page numbers and versions (no database error), and the document states the bounds', async () => {
      const page = await call('GET', '/employees?page=1884348765123150848', { token: team.adminToken });
      expect(messages(page)).to.deep.equal(['query.page must be <= 2147483647']);
      const file = await uploadFile(csv(2), { token: team.adminToken });
      expect(file.status, file.text).to.equal(201);
      const version = await call('GET', `/files/${file.body.id}/versions/2147483648`, {
        token: team.adminToken,
      });
      expect(messages(version)).to.deep.equal(['path.version must be <= 2147483647']);
      const biggest = await call('GET', `/files/${file.body.id}/versions/2147483647`, {
        token: team.adminToken,
      });
      expectErrorBody(biggest, 404);
      const farPage = await call('GET', '/employees?page=2147483647&limit=100', { token: team.adminToken });
      expect(farPage.status, farPage.text).to.equal(200);
      expect(farPage.body.meta.page).to.equal(2147483647);

      const doc = (await call('GET', '/openapi.json')).body as {
        paths: Record<string, Record<string, { parameters: Array<{ name: string; schema: JsonSchema }> }>>;
      };
      const param = (p: string, name: string) =>
        doc.paths[p].get.parameters.find((x) => x.name === name)?.schema as Record<string, unknown>;
      expect(param('/employees', 'page')).to.include({ minimum: 1, maximum: 2147483647 });
      expect(param('/files', 'limit')).to.include({ minimum: 1, maximum: 100 });
      expect(param('/files/{id}/versions/{version}', 'version')).to.include({
        minimum: 1,
        maximum: 2147483647,
      });
      // every integer parameter of the document is bounded on both sides
      for (const [p, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          for (const x of op.parameters ?? []) {
            const s = x.schema as { type?: string; minimum?: number; maximum?: number };
            if (s?.type === 'integer')
              expect([s.minimum, s.maximum], `${method} ${p} ${x.name}`).to.satisfy((b: unknown[]) =>
                b.every((v) => typeof v === 'number'),
              );
          }
        }
      }
    });

    it('still accepts plain integers (leading zeros included) and fills defaults', async () => {
      const res = await call('GET', '/api-keys?page=01&limit=5', { token: team.adminToken });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.meta).to.include({ page: 1, limit: 5 });
      const dflt = await call('GET', '/api-keys', { token: team.adminToken });
      expect(dflt.body.meta).to.include({ page: 1, limit: 20 });
    });

    it('refuses a number that JSON turns into Infinity in a body (strict numbers)', async () => {
      const res = await call('POST', '/_test/echo', {
        raw: '{"name":"a","count":1e400}',
        headers: { 'content-type': 'application/json' },
      });
      expect(messages(res)).to.deep.equal(['body.count must be integer']);
    });

    it('refuses a body nested thousands deep with 400 (public sign-in, and with an Idempotency-Key), not a 500', async () => {
      const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      const login = await call('POST', '/auth/login', {
        raw: `{"email":${deep},"password":"x"}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(expectErrorBody(login, 400).message).to.equal(
        'the JSON body nests deeper than 64 levels of objects and arrays',
      );
      const keyed = await call('POST', '/rules', {
        token: team.adminToken,
        raw: `{"name":"r","kind":"not_null","column":"a","params":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
      });
      expect(expectErrorBody(keyed, 400).message).to.match(/nests deeper than 64/);
      // 64 levels are fine (the schema judges the content)
      const ok = await call('POST', '/_test/echo', {
        raw: `{"name":"a","count":1,"extra":${'['.repeat(63)}${']'.repeat(63)}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(messages(ok).join(' ')).to.not.match(/nests deeper/);
    });
  });

  describe('4. methods a path does not have', () => {
    const OTHER_METHODS = [
      'GET',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'TRACE',
      'PROPFIND',
      'SEARCH',
      'PURGE',
      'LINK',
      'UNLINK',
      'LOCK',
      'MKCOL',
      'COPY',
      'MOVE',
      'REPORT',
    ];

    it('answers every route of the table, for every method it lacks, with 405, the error body and Allow', async () => {
      const byPath = new Map<string, Set<string>>();
      for (const r of routes) {
        const set = byPath.get(r.path) ?? new Set<string>();
        set.add(r.method.toUpperCase());
        if (r.method === 'get') set.add('HEAD');
        byPath.set(r.path, set);
      }
      let checked = 0;
      for (const [path, methods] of byPath) {
        const allow = [...methods, 'OPTIONS'].sort();
        const url = concretePath(path);
        for (const method of OTHER_METHODS.filter((m) => !methods.has(m))) {
          const res = await rawRequest(method, url);
          const where = `${method} ${openApiPath(path)}`;
          expect(res.status, `${where}: ${res.text}`).to.equal(405);
          expect(expectErrorBody(res, 405).message, where).to.equal(`${method} is not allowed on ${url}`);
          expect(res.headers.get('allow')?.split(/,\s*/).sort(), where).to.deep.equal(allow);
          checked += 1;
        }
      }
      expect(checked).to.be.greaterThan(byPath.size * 8);
    });

    it('answers OPTIONS with 204 and Allow, and an unknown path with 404 whatever the method', async () => {
      const opt = await rawRequest('OPTIONS', '/health');
      expect(opt.status).to.equal(204);
      expect(opt.headers.get('allow')?.split(/,\s*/).sort()).to.deep.equal(['GET', 'HEAD', 'OPTIONS']);
      for (const method of ['TRACE', 'PROPFIND', 'GET', 'OPTIONS']) {
        const res = await rawRequest(method, '/no-such-path');
        expect(expectErrorBody(res, 404).message).to.equal(`no route for ${method} /no-such-path`);
      }
    });

    it('logs them as client errors, without an error-level line or a stack', async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      });
      const app = createApp({ ...testEnv().deps, logger: pino({ level: 'info' }, sink) });
      const server = http.createServer(app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'PURGE', 'LINK']) {
          const res = await rawRequest(method, '/health', { baseUrl });
          expectErrorBody(res, 405);
        }
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      const entries = lines.map((l) => JSON.parse(l) as { level: number; status?: number; err?: unknown });
      expect(entries.filter((e) => e.level >= 50)).to.deep.equal([]);
      expect(entries.filter((e) => e.err)).to.deep.equal([]);
      expect(entries.filter((e) => e.status === 405)).to.have.lengthOf(5);
    });
  });

  describe('6. Content-Encoding', () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      it(`answers 400 for a body labelled ${encoding} that is not, on a public route too`, async () => {
        for (const path of ['/_test/echo', '/auth/refresh']) {
          const res = await call('POST', path, {
            raw: JSON.stringify({ name: 'a', refreshToken: 'x' }),
            headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          });
          expect(messages(res), path).to.deep.equal([`the request body is not valid ${encoding} data`]);
        }
      });
    }

    it('answers 415 for an encoding it does not accept, and still reads a real gzip body', async () => {
      const res = await call('POST', '/_test/echo', {
        raw: JSON.stringify({ name: 'a' }),
        headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
      });
      expect(expectErrorBody(res, 415).message).to.equal(
        'unsupported content encoding "compress": send gzip, deflate, br or identity',
      );
      const ok = await call('POST', '/_test/echo', {
        raw: gzipSync(JSON.stringify({ name: 'zipped' })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.body).to.deep.equal({ name: 'zipped' });
    });

    it('documents 413 and 415 on every operation that reads a JSON body', async () => {
      const doc = (await call('GET', '/openapi.json')).body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      for (const r of routes.filter((x) => x.method !== 'get' && x.method !== 'delete' && !x.multipart)) {
        const op = doc.paths[openApiPath(r.path)][r.method];
        expect(op.responses, key(r)).to.include.keys('413', '415');
      }
      expect(doc.paths['/auth/refresh'].post.responses['415']).to.deep.equal({
        $ref: '#/components/responses/UnsupportedMediaType',
      });
    });

    it('answers 415 for an encoded multipart upload (uploads are streamed as sent)', async () => {
      const form = multipart([{ name: 'file', filename: 'a.csv', contentType: 'text/csv', data: csv(2) }]);
      const res = await call('POST', '/files', {
        token: team.adminToken,
        raw: gzipSync(form.body),
        headers: { 'content-type': form.contentType, 'content-encoding': 'gzip' },
      });
      expect(expectErrorBody(res, 415).message).to.equal(
        'unsupported content encoding "gzip" for multipart/form-data: send the form uncompressed',
      );
    });
  });

  describe('the same class elsewhere: malformed paths and query strings', () => {
    it('answers 400 or 404, never 500, for broken percent-encoding and control characters', async () => {
      for (const path of [
        '/files/%E0%A4%A',
        '/files/%FF%FE',
        '/files?limit=%FF',
        '/files?cursor=%E0%A4%A',
        '/docs/%0A%0D',
        '/employees?page=%00',
        `/files?cursor=${'a'.repeat(5000)}`,
      ]) {
        const res = await call('GET', path, { token: team.adminToken });
        expect([400, 404], `${path.slice(0, 40)}: ${res.text}`).to.include(res.status);
        expectErrorBody(res, res.status);
      }
    });
  });

  describe('the same class elsewhere: headers', () => {
    it('refuses an oversized or non-ASCII X-Request-Id by replacing it, and a huge header with 431', async () => {
      const res = await call('GET', '/health', { headers: { 'X-Request-Id': 'a'.repeat(5000) } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      const huge = await rawRequest('GET', '/health', { headers: { 'x-filler': 'a'.repeat(70_000) } });
      expect(huge.status).to.equal(431);
    });

    it('answers 400 for an Idempotency-Key that is not printable ASCII or is too long', async () => {
      for (const value of ['k'.repeat(256), 'caf\u00e9-key', 'has space']) {
        const res = await rawRequest('POST', '/api-keys', {
          headers: {
            authorization: `Bearer ${team.adminToken}`,
            'content-type': 'application/json',
            'idempotency-key': value,
          },
          body: JSON.stringify({ name: 'k', scopes: ['files:read'] }),
        });
        expect(res.status, `${value.slice(0, 20)}: ${res.text}`).to.equal(400);
      }
    });
  });
});
