import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createApp } from '../../api/app';
import { buildOpenApi, compareWithRouter } from '../../api/openapi';
import { routes } from '../../api/routes';
import { route } from '../../api/routing';
import { apiClient } from '../helpers/client';
import { call } from '../helpers/http';
import { createTeam } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { platformTestRoutes } from '../helpers/platformRoutes';

type Doc = Record<string, any>;

async function documentOf(baseUrl?: string): Promise<Doc> {
  const res = await apiClient({ baseUrl }).get('/openapi.json');
  expect(res.status).to.equal(200);
  return res.body as Doc;
}

describe('OpenAPI document and docs page', () => {
  it('documents every route the router serves, and nothing else', async () => {
    const app = createApp(testEnv().deps, { extraRoutes: platformTestRoutes });
    const doc = buildOpenApi(app.context.routeTable);
    expect(compareWithRouter(app.router, doc)).to.deep.equal({ undocumented: [], unrouted: [] });
    // the check can fail: a route without an operation, and an operation without a route
    const lessDoc = buildOpenApi(routes.filter((r) => r.path !== '/plans'));
    expect(compareWithRouter(createApp(testEnv().deps).router, lessDoc)).to.deep.equal({
      undocumented: ['GET /plans'],
      unrouted: [],
    });
    const extra = route({
      method: 'get',
      path: '/ghosts/:id',
      summary: 'x',
      tag: 'x',
      access: { public: true },
      responses: { 200: { description: 'x' } },
      handler: async () => ({}),
    });
    expect(
      compareWithRouter(createApp(testEnv().deps).router, buildOpenApi([...routes, extra])),
    ).to.deep.equal({
      undocumented: [],
      unrouted: ['GET /ghosts/{id}'],
    });
  });

  it('the served document matches the served router', async () => {
    const doc = await documentOf();
    expect(doc.openapi).to.equal('3.1.0');
    const ops = Object.entries(doc.paths as Doc).flatMap(([p, item]) =>
      Object.keys(item as Doc).map((m) => `${m.toUpperCase()} ${p}`),
    );
    for (const op of ['GET /subscriptions/me', 'PATCH /subscriptions/me', 'GET /plans', 'POST /api-keys']) {
      expect(ops).to.include(op);
    }
    expect(ops).to.include('DELETE /api-keys/{id}');
    expect(new Set(ops).size).to.equal(ops.length);
  });

  it('states security, scopes, roles, buckets and idempotency per operation', async () => {
    const doc = await documentOf();
    const me = doc.paths['/subscriptions/me'];
    expect(me.get.security).to.deep.equal([{ session: [] }, { apiKey: ['files:read'] }]);
    expect(me.get['x-roles']).to.deep.equal(['admin', 'employee']);
    expect(me.patch.security).to.deep.equal([{ session: [] }]);
    expect(me.patch['x-roles']).to.deep.equal(['admin']);
    expect(me.patch['x-rate-limit']).to.deep.equal({ bucket: 'plan', perMinute: 10, per: 'company' });
    expect(me.patch.requestBody.content['application/json'].schema.properties.plan.enum).to.deep.equal([
      'free',
      'basic',
      'premium',
    ]);
    expect(doc.paths['/auth/login'].post.security).to.deep.equal([]);
    expect(doc.paths['/auth/login'].post['x-rate-limit']).to.deep.equal({
      bucket: 'signIn',
      perMinute: 10,
      per: 'client address',
    });
    const create = doc.paths['/api-keys'].post;
    expect(create['x-idempotent']).to.equal(true);
    expect(create.parameters).to.deep.include({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(create.responses['422']).to.deep.equal({ $ref: '#/components/responses/Unprocessable' });
    // a public route's keys are scoped to the client address, not to a company (there is none yet)
    expect(doc.paths['/auth/register'].post['x-idempotent']).to.equal(true);
    expect(doc.components.parameters.IdempotencyKey.description).to.include(
      'to the client address on a public route',
    );
    const del = doc.paths['/api-keys/{id}'].delete;
    expect(del.parameters[0]).to.include({ name: 'id', in: 'path', required: true });
    expect(doc.components.securitySchemes.session).to.include({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(doc.components.securitySchemes.apiKey).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('shares the error body, list envelopes and rate-limit headers as components', async () => {
    const doc = await documentOf();
    expect(doc.components.schemas.ErrorBody.required).to.deep.equal([
      'statusCode',
      'message',
      'correlationId',
      'timestamp',
    ]);
    expect(doc.components.schemas.PageMeta.required).to.deep.equal(['page', 'limit', 'total', 'totalPages']);
    expect(doc.components.schemas.CursorMeta.required).to.deep.equal(['nextCursor', 'hasMore']);
    const list = doc.paths['/api-keys'].get;
    expect(list.responses['200'].content['application/json'].schema.properties.meta).to.deep.equal({
      $ref: '#/components/schemas/PageMeta',
    });
    const params = list.parameters.map((p: Doc) => [p.name, p.in, p.schema.maximum ?? null]);
    expect(params).to.deep.include(['limit', 'query', 100]);
    expect(list.responses['429']).to.deep.equal({ $ref: '#/components/responses/TooManyRequests' });
    expect(doc.components.responses.TooManyRequests.headers['Retry-After']).to.be.an('object');
    expect(list.responses['200'].headers['X-RateLimit-Reset']).to.deep.equal({
      $ref: '#/components/headers/XRateLimitReset',
    });
  });

  it('every schema in the document is valid JSON Schema 2020-12 and every $ref resolves', async () => {
    const doc = await documentOf();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi.json');
    const pointers: string[] = [];
    const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
    const walk = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node)) {
        if (k === 'schema') pointers.push(`${at}/${escape(k)}`);
        else walk(v, `${at}/${escape(k)}`);
      }
    };
    walk(doc.paths, '#/paths');
    for (const name of Object.keys(doc.components.schemas)) pointers.push(`#/components/schemas/${name}`);
    expect(pointers.length).to.be.greaterThan(20);
    for (const pointer of pointers) {
      expect(() => ajv.compile({ $ref: `openapi.json${pointer}` }), pointer).not.to.throw();
    }
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const path = ref.slice(9, -1).split('/').slice(1);
      let node: unknown = doc;
      for (const part of path) node = (node as Doc)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      expect(node, ref).not.to.equal(undefined);
    }
  });

  it('every 429 an operation documents carries Retry-After, its own 429s (sign-in, demo) included', async () => {
    const doc = await documentOf();
    const resolve = (r: Doc): Doc =>
      r.$ref ? (doc.components.responses as Doc)[String(r.$ref).split('/').pop()!] : r;
    const missing: string[] = [];
    for (const [p, item] of Object.entries(doc.paths as Doc)) {
      for (const [method, op] of Object.entries(item as Doc)) {
        const tooMany = (op as Doc).responses['429'] as Doc | undefined;
        if (!tooMany) missing.push(`${method.toUpperCase()} ${p}: no 429`);
        else if (!resolve(tooMany).headers?.['Retry-After']) missing.push(`${method.toUpperCase()} ${p}`);
      }
    }
    expect(missing).to.deep.equal([]);
    expect(doc.paths['/auth/login'].post.responses['429'].headers['Retry-After'].schema).to.deep.equal({
      type: 'integer',
      minimum: 1,
    });
  });

  it('documents the 202 body of forgot-password and resend-activation, and their answers match it', async () => {
    const doc = await documentOf();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi.json');
    for (const path of ['/auth/forgot-password', '/auth/resend-activation']) {
      const accepted = doc.paths[path].post.responses['202'];
      expect(accepted.content?.['application/json']?.schema, path).to.be.an('object');
      const validate = ajv.compile({
        $ref: `openapi.json#/paths/${path.replace(/\//g, '~1')}/post/responses/202/content/application~1json/schema`,
      });
      const res = await call('POST', path, { json: { email: 'nobody@example.test' } });
      expect(res.status).to.equal(202);
      expect(validate(res.body), JSON.stringify(validate.errors)).to.equal(true);
    }
  });

  it('documents the media type each answer is sent as (GraphQL by Accept, the docs page files)', async () => {
    const doc = await documentOf();
    const { adminToken } = await createTeam();
    const mediaType = (res: { headers: Headers }) => (res.headers.get('content-type') ?? '').split(';')[0];
    const documented = (p: string, method: string, status: number): string[] =>
      Object.keys(doc.paths[p][method].responses[String(status)].content ?? {});
    const query = { query: '{ company { name } }' };
    for (const accept of [undefined, 'application/graphql-response+json', 'application/json']) {
      const headers = accept ? { accept } : undefined;
      const ok = await call('POST', '/graphql', { token: adminToken, json: query, headers });
      expect(ok.status).to.equal(200);
      expect(documented('/graphql', 'post', 200), String(accept)).to.include(mediaType(ok));
      const bad = await call('POST', '/graphql', { token: adminToken, json: { query: '{ nope }' }, headers });
      expect(documented('/graphql', 'post', bad.status), `${accept} ${bad.status}`).to.include(
        mediaType(bad),
      );
      const get = await call('GET', `/graphql?query=${encodeURIComponent(query.query)}`, {
        token: adminToken,
        headers,
      });
      expect(documented('/graphql', 'get', 200), String(accept)).to.include(mediaType(get));
    }
    for (const file of ['init.js', 'swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-32x32.png']) {
      const res = await call('GET', `/docs/${file}`);
      expect(res.status).to.equal(200);
      expect(documented('/docs/{asset}', 'get', 200), file).to.include(mediaType(res));
    }
  });

  it('serves the docs page and its Swagger UI files from the package, without a CDN', async () => {
    const page = await call('GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.include('/docs/swagger-ui-bundle.js');
    expect(page.text).not.to.match(/https?:\/\//);
    const init = await call('GET', '/docs/init.js');
    expect(init.text).to.include("url: '/openapi.json'");
    const bundle = await call('GET', '/docs/swagger-ui-bundle.js');
    expect(bundle.status).to.equal(200);
    expect(bundle.headers.get('content-type')).to.match(/javascript/);
    expect(bundle.text.length).to.be.greaterThan(100_000);
    const css = await call('GET', '/docs/swagger-ui.css');
    expect(css.headers.get('content-type')).to.match(/^text\/css/);
    expect((await call('GET', '/docs/package.json')).status).to.equal(404);
    expect((await call('GET', '/docs/..%2Fpackage.json')).status).to.be.oneOf([400, 404]);
  });
});
