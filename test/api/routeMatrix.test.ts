/**
 * The authorization matrix over the whole route table: for every route that is not public,
 * no token → 401; malformed, expired or revoked token → 401; a key lacking the scope → 403;
 * an employee on an admin route → 403; another company's resource id → 404.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { sessionKeys } from '../../domain/identity/sessions';
import { routes } from '../../api/routes';
import { SCOPES, type RouteSpec, type Scope } from '../../api/routing';
import { createApiKey, createTeam } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { csv, uploadFile } from '../helpers/files';
import { insertDelivery } from '../helpers/webhooks';

type Team = Awaited<ReturnType<typeof createTeam>>;

/**
 * For each route with path parameters: a resource of ANOTHER company, and a body valid for the route, so
 * that the only reason left for refusing is the tenant boundary. A new route with parameters needs an entry.
 */
const otherCompanyResource: Record<
  string,
  (other: Team) => Promise<{ params: Record<string, string>; body?: unknown }>
> = {
  'DELETE /api-keys/:id': async (other) => {
    const res = await call('POST', '/api-keys', {
      token: other.adminToken,
      json: { name: 'k', scopes: ['files:read'] },
    });
    return { params: { id: res.body.id } };
  },
  ...Object.fromEntries(
    ['GET /comparisons/:id', 'GET /comparisons/:id/changes'].map((name) => [
      name,
      async (other: Team) => {
        // a comparison of a company-wide file of the other company
        const up = await uploadFile(csv(2), { token: other.adminToken, visibility: 'company' });
        const res = await call('POST', '/comparisons', {
          token: other.adminToken,
          json: { base: { fileId: up.body.id, version: 1 }, target: { fileId: up.body.id, version: 1 } },
        });
        return { params: { id: res.body.id as string } };
      },
    ]),
  ),
  // issue 16: an invoice of the other company, written straight to the database
  ...Object.fromEntries(
    ['GET /invoices/:id', 'GET /invoices/:id/document'].map((name) => [
      name,
      async (other: Team) => {
        const id = randomUUID();
        const sequence = Math.floor(Math.random() * 1e6) + 1;
        await testEnv()
          .knex('invoices')
          .insert({
            id,
            companyId: other.company.id,
            sequence,
            number: `2000-${String(sequence).padStart(6, '0')}`,
            periodKey: `x-${id}`,
            periodStart: new Date(Date.UTC(2000, 0, 1) - sequence * 1000),
            periodEnd: new Date('2000-02-01T00:00:00Z'),
            currency: 'USD',
            subtotalCents: 100,
            totalCents: 100,
            lines: JSON.stringify([]),
            segments: JSON.stringify([]),
            filesUsed: 0,
            companyName: 'other',
          });
        return { params: { id } };
      },
    ]),
  ),
  'PATCH /employees/:id': async (other) => ({ params: { id: other.employee.id }, body: { role: 'admin' } }),
  'DELETE /employees/:id': async (other) => ({ params: { id: other.employee.id } }),
  ...Object.fromEntries(
    [
      'GET /files/:id',
      'PATCH /files/:id',
      'DELETE /files/:id',
      'POST /files/:id/versions',
      'GET /files/:id/versions',
      'GET /files/:id/versions/:version',
      'GET /files/:id/versions/:version/preview',
      'GET /files/:id/versions/:version/download-link',
      'GET /files/:id/versions/:version/report',
      'GET /files/:id/report',
      'POST /files/:id/versions/:version/report/rebuild',
      'GET /files/:id/versions/:version/comparison',
    ].map((name) => [
      name,
      async (other: Team) => {
        // a company-wide file of the other company: visible to everyone there, to no one here
        const res = await uploadFile(csv(2), { token: other.adminToken, visibility: 'company' });
        return {
          params: { id: res.body.id as string, version: '1' },
          body: name === 'PATCH /files/:id' ? { visibility: 'private' } : undefined,
        };
      },
    ]),
  ),
  ...Object.fromEntries(
    ['GET /rules/:id', 'PATCH /rules/:id', 'DELETE /rules/:id'].map((name) => [
      name,
      async (other: Team) => {
        const res = await call('POST', '/rules', {
          token: other.adminToken,
          json: { name: 'other', kind: 'not_null', column: 'a' },
        });
        expect(res.status, res.text).to.equal(201);
        return {
          params: { id: res.body.id as string },
          body: name === 'PATCH /rules/:id' ? { name: 'x' } : undefined,
        };
      },
    ]),
  ),
  // issue 15: comments of a company-wide file of the other company, and one of its notifications
  ...Object.fromEntries(
    ['POST /files/:id/comments', 'GET /files/:id/comments'].map((name) => [
      name,
      async (other: Team) => {
        const res = await uploadFile(csv(2), { token: other.adminToken, visibility: 'company' });
        return {
          params: { id: res.body.id as string },
          body: name.startsWith('POST') ? { body: 'hello' } : undefined,
        };
      },
    ]),
  ),
  ...Object.fromEntries(
    ['GET /comments/:id', 'PATCH /comments/:id', 'DELETE /comments/:id'].map((name) => [
      name,
      async (other: Team) => {
        const up = await uploadFile(csv(2), { token: other.adminToken, visibility: 'company' });
        const res = await call('POST', `/files/${up.body.id}/comments`, {
          token: other.adminToken,
          json: { body: 'theirs' },
        });
        expect(res.status, res.text).to.equal(201);
        return {
          params: { id: res.body.id as string },
          body: name === 'PATCH /comments/:id' ? { body: 'mine now' } : undefined,
        };
      },
    ]),
  ),
  'POST /notifications/:id/read': async (other) => {
    const id = randomUUID();
    await testEnv()
      .knex('notifications')
      .insert({
        id,
        companyId: other.company.id,
        personId: other.admin.id,
        kind: 'quota.threshold',
        resourceType: 'company',
        resourceId: other.company.id,
        dedupeKey: `matrix:${id}`,
      });
    return { params: { id } };
  },
  'PATCH /outgoing-webhooks/:id': async (other) => ({
    params: { id: await otherEndpoint(other) },
    body: { name: 'renamed' },
  }),
  'DELETE /outgoing-webhooks/:id': async (other) => ({ params: { id: await otherEndpoint(other) } }),
  'POST /outgoing-webhooks/:id/rotate-secret': async (other) => ({
    params: { id: await otherEndpoint(other) },
  }),
  'POST /outgoing-webhooks/:id/ping': async (other) => ({ params: { id: await otherEndpoint(other) } }),
  'GET /outgoing-webhooks/:id/deliveries': async (other) => ({ params: { id: await otherEndpoint(other) } }),
  'POST /outgoing-webhooks/deliveries/:deliveryId/redeliver': async (other) => {
    const endpointId = await otherEndpoint(other);
    const deliveryId = await insertDelivery(other.company.id, endpointId, 'succeeded');
    return { params: { deliveryId } };
  },
};

/** An endpoint of the other company (a public address literal: accepted without DNS). */
async function otherEndpoint(other: Team): Promise<string> {
  const res = await call('POST', '/outgoing-webhooks', {
    token: other.adminToken,
    json: { name: 'other', url: 'https://93.184.216.34/hook', events: ['file.uploaded'] },
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

const protectedRoutes = routes.filter((r) => !r.access.public);
const key = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;
const fill = (path: string, params: Record<string, string>) =>
  path.replace(/:(\w+)/g, (_, name: string) => params[name]);
const placeholder = (path: string) => path.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');

describe('authorization matrix over the route table', function () {
  this.timeout(120_000);
  let team: Team;
  let other: Team;
  let expiredToken: string;
  let revokedKey: string;

  before(async () => {
    team = await createTeam({ plan: 'premium' });
    other = await createTeam({ plan: 'premium' });
    const keys = sessionKeys(testEnv().config.secretKey);
    expiredToken = await new SignJWT({ cid: team.company.id, sid: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(team.admin.id)
      .setIssuer('data-service')
      .setAudience('data-service-api')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(keys.access);
    revokedKey = await createApiKey(team.admin, [...SCOPES]);
    await testEnv()
      .knex('apiKeys')
      .whereNotNull('id')
      .where({ personId: team.admin.id })
      .update({ revokedAt: new Date() });
  });

  it('has routes to check', () => {
    expect(protectedRoutes.length).to.be.greaterThan(5);
  });

  it('every protected route with a path parameter has an other-company fixture', () => {
    const missing = protectedRoutes
      .filter((r) => r.path.includes(':') && !otherCompanyResource[key(r)])
      .map(key);
    expect(missing, 'add fixtures to otherCompanyResource').to.deep.equal([]);
  });

  for (const route of protectedRoutes) {
    describe(key(route), () => {
      const method = route.method.toUpperCase();
      const path = placeholder(route.path);
      const json = route.method === 'get' ? undefined : {};

      it('no token, malformed, expired or revoked token → 401', async () => {
        for (const token of [undefined, 'garbage', expiredToken, revokedKey]) {
          expectErrorBody(await call(method, path, { token, json }), 401);
        }
      });

      it('a key lacking the scope → 403', async () => {
        const access = route.access as { keyScope?: Scope };
        const others = SCOPES.filter((s) => s !== access.keyScope);
        const lacking = await createApiKey(team.admin, others);
        expectErrorBody(await call(method, path, { token: lacking, json }), 403);
      });

      if (!(route.access as { roles: string[] }).roles.includes('employee')) {
        it('an employee on an admin route → 403', async () => {
          expectErrorBody(await call(method, path, { token: team.employeeToken, json }), 403);
        });
      }

      if (route.path.includes(':')) {
        it("another company's resource id → 404", async () => {
          const fixture = otherCompanyResource[key(route)];
          const { params, body } = await fixture(other);
          const res = await call(method, fill(route.path, params), {
            token: team.adminToken,
            json: body ?? json,
          });
          expectErrorBody(res, 404);
        });
      }
    });
  }
});
