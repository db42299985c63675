/**
 * Issue 15 item 6, over the route table: every state-changing (non-GET) route writes an audit entry in the
 * unit of work of its change — shown here by calling it and finding the entry under the answer's
 * correlation id, with the key that did it when a key did it — or is listed in EXEMPT with its reason.
 * A new write route fails this test until it has one or the other.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { routes } from '../../api/routes';
import type { RouteSpec } from '../../api/routing';
import { testEnv } from '../helpers/env';
import { createPerson, createTeam, DEFAULT_PASSWORD, signIn } from '../helpers/factories';
import { call, type HttpResponse } from '../helpers/http';
import { csv, uploadFile, uploadTo } from '../helpers/files';
import { tokenFromMail } from '../helpers/mailbox';
import { auditOf, keyWithId } from '../helpers/collab';
import { insertDelivery } from '../helpers/webhooks';

type Team = Awaited<ReturnType<typeof createTeam>>;
interface Run {
  res: HttpResponse;
  /** the key that made the request, when a key did */
  keyId?: string;
}

const key = (r: RouteSpec) => `${r.method.toUpperCase()} ${r.path}`;
const unique = () => `audit-${randomUUID().slice(0, 12)}@example.test`;
const HOOK = 'https://93.184.216.34/hook';

/** Write routes that write no audit entry, each with its reason (README "Audit log"). */
const EXEMPT: Record<string, string> = {
  'POST /auth/refresh':
    'a token rotation inside a session changes no company data; a reused (stolen) refresh token is audited as session.refresh_token_reused (test/api/auditLog.test.ts)',
  'POST /auth/oauth/google/url':
    'stores a short-lived OAuth state before anyone is known: there is no company or person to record it for',
  'POST /auth/oauth/exchange':
    'starts a session through startSession, which writes session.started in the same unit of work as sign-in does (shown here for POST /auth/login); it needs the OpenID test provider of test/api/oauth.test.ts',
  'POST /mcp':
    "a transport: each tool call runs its REST route's handler and domain command, which write that route's entry with the key (the AI-agent upload's entry, via ai-agent, is checked in test/api/mcp.test.ts); reads write none, as over REST",
  'POST /graphql': 'read only (the schema has no mutation type): it changes nothing, like a GET',
};

async function register(email = unique()) {
  const res = await call('POST', '/auth/register', {
    json: { companyName: 'Audit Co', name: 'Founder', email, password: DEFAULT_PASSWORD },
  });
  expect(res.status, res.text).to.equal(201);
  return { email, res };
}

async function upload(team: Team, visibility = 'private') {
  const res = await uploadFile(csv(3), { token: team.adminToken, visibility });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function endpoint(team: Team): Promise<string> {
  const res = await call('POST', '/outgoing-webhooks', {
    token: team.adminToken,
    json: { name: 'audit', url: HOOK, events: ['file.uploaded'] },
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function rule(team: Team): Promise<string> {
  const res = await call('POST', '/rules', {
    token: team.adminToken,
    json: { name: 'r', kind: 'not_null', column: 'a' },
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function comment(team: Team): Promise<string> {
  const fileId = await upload(team, 'company');
  const res = await call('POST', `/files/${fileId}/comments`, {
    token: team.adminToken,
    json: { body: 'hi' },
  });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function notificationOf(team: Team): Promise<string> {
  const id = randomUUID();
  await testEnv()
    .knex('notifications')
    .insert({
      id,
      companyId: team.company.id,
      personId: team.admin.id,
      kind: 'quota.threshold',
      resourceType: 'company',
      resourceId: team.company.id,
      dedupeKey: `test:${id}`,
    });
  return id;
}

/** How to call each write route successfully (with a key where the route takes one). */
const SCENARIOS: Record<string, (team: Team) => Promise<Run>> = {
  'POST /auth/register': async () => ({ res: (await register()).res }),
  'POST /auth/activate': async () => {
    const { email } = await register();
    const token = await tokenFromMail(email, /Activate/);
    return { res: await call('POST', '/auth/activate', { json: { token } }) };
  },
  'POST /auth/resend-activation': async () => {
    const { email } = await register();
    return { res: await call('POST', '/auth/resend-activation', { json: { email } }) };
  },
  'POST /auth/forgot-password': async (team) => ({
    res: await call('POST', '/auth/forgot-password', { json: { email: team.employee.email } }),
  }),
  'POST /auth/reset-password': async (team) => {
    const person = await createPerson(team.company, { role: 'employee' });
    await call('POST', '/auth/forgot-password', { json: { email: person.email } });
    const token = await tokenFromMail(person.email, /Reset/);
    return {
      res: await call('POST', '/auth/reset-password', { json: { token, password: 'a brand new password' } }),
    };
  },
  'POST /auth/accept-invite': async (team) => {
    const email = unique();
    await call('POST', '/invitations', { token: team.adminToken, json: { email, role: 'employee' } });
    const token = await tokenFromMail(email, /invited/);
    return {
      res: await call('POST', '/auth/accept-invite', { json: { token, password: 'my own password' } }),
    };
  },
  'POST /auth/login': async (team) => ({
    res: await call('POST', '/auth/login', {
      json: { email: team.employee.email, password: DEFAULT_PASSWORD },
    }),
  }),
  'POST /auth/logout': async (team) => {
    const pair = await signIn(team.employee);
    return {
      res: await call('POST', '/auth/logout', {
        token: pair.accessToken,
        json: { refreshToken: pair.refreshToken },
      }),
    };
  },
  'POST /api-keys': async (team) => ({
    res: await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'k', scopes: ['files:read'] },
    }),
  }),
  'DELETE /api-keys/:id': async (team) => {
    const { id } = await keyWithId(team.admin, ['files:read']);
    return { res: await call('DELETE', `/api-keys/${id}`, { token: team.adminToken }) };
  },
  'POST /invitations': async (team) => ({
    res: await call('POST', '/invitations', {
      token: team.adminToken,
      json: { email: unique(), role: 'employee' },
    }),
  }),
  'PATCH /employees/:id': async (team) => {
    const person = await createPerson(team.company, { role: 'employee' });
    return {
      res: await call('PATCH', `/employees/${person.id}`, {
        token: team.adminToken,
        json: { role: 'admin' },
      }),
    };
  },
  'DELETE /employees/:id': async (team) => {
    const person = await createPerson(team.company, { role: 'employee' });
    return { res: await call('DELETE', `/employees/${person.id}`, { token: team.adminToken }) };
  },
  'PATCH /companies/me': async (team) => ({
    res: await call('PATCH', '/companies/me', {
      token: team.adminToken,
      json: { name: `Renamed ${randomUUID()}` },
    }),
  }),
  'POST /demo/sessions': async () => ({ res: await call('POST', '/demo/sessions', { json: {} }) }),
  'PATCH /subscriptions/me': async () => {
    const team = await createTeam({ plan: 'premium' });
    return {
      res: await call('PATCH', '/subscriptions/me', { token: team.adminToken, json: { plan: 'basic' } }),
    };
  },
  'POST /files': async (team) => {
    const k = await keyWithId(team.admin, ['files:write']);
    return { res: await uploadFile(csv(2), { token: k.token }), keyId: k.id };
  },
  'PATCH /files/:id': async (team) => {
    const fileId = await upload(team);
    const k = await keyWithId(team.admin, ['files:write']);
    const res = await call('PATCH', `/files/${fileId}`, { token: k.token, json: { visibility: 'company' } });
    return { res, keyId: k.id };
  },
  'DELETE /files/:id': async (team) => {
    const fileId = await upload(team);
    const k = await keyWithId(team.admin, ['files:write']);
    return { res: await call('DELETE', `/files/${fileId}`, { token: k.token }), keyId: k.id };
  },
  'POST /files/:id/versions': async (team) => {
    const fileId = await upload(team);
    const k = await keyWithId(team.admin, ['files:write']);
    return { res: await uploadTo(`/files/${fileId}/versions`, csv(4), { token: k.token }), keyId: k.id };
  },
  'POST /files/:id/versions/:version/report/rebuild': async (team) => {
    const fileId = await upload(team);
    // no build is running: the report is finished (a worker would have finished it)
    const { knex } = testEnv();
    const updated = await knex('reports')
      .where({ fileId })
      .update({ status: 'ready', finishedAt: new Date() });
    if (updated === 0) {
      const version = (await knex('fileVersions').where({ fileId, version: 1 }).first()) as { id: string };
      await knex('reports').insert({
        id: randomUUID(),
        companyId: team.company.id,
        fileId,
        fileVersionId: version.id,
        version: 1,
        status: 'ready',
        finishedAt: new Date(),
      });
    }
    const k = await keyWithId(team.admin, ['files:write']);
    const res = await call('POST', `/files/${fileId}/versions/1/report/rebuild`, {
      token: k.token,
      json: {},
    });
    return { res, keyId: k.id };
  },
  'POST /comparisons': async (team) => {
    const fileId = await upload(team);
    await uploadTo(`/files/${fileId}/versions`, csv(4), { token: team.adminToken });
    const k = await keyWithId(team.admin, ['files:read']);
    const res = await call('POST', '/comparisons', {
      token: k.token,
      json: { base: { fileId, version: 1 }, target: { fileId, version: 2 } },
    });
    return { res, keyId: k.id };
  },
  'POST /outgoing-webhooks': async (team) => ({
    res: await call('POST', '/outgoing-webhooks', {
      token: team.adminToken,
      json: { name: 'audit', url: HOOK, events: ['file.uploaded'] },
    }),
  }),
  'PATCH /outgoing-webhooks/:id': async (team) => ({
    res: await call('PATCH', `/outgoing-webhooks/${await endpoint(team)}`, {
      token: team.adminToken,
      json: { name: 'renamed' },
    }),
  }),
  'DELETE /outgoing-webhooks/:id': async (team) => ({
    res: await call('DELETE', `/outgoing-webhooks/${await endpoint(team)}`, { token: team.adminToken }),
  }),
  'POST /outgoing-webhooks/:id/rotate-secret': async (team) => ({
    res: await call('POST', `/outgoing-webhooks/${await endpoint(team)}/rotate-secret`, {
      token: team.adminToken,
      json: {},
    }),
  }),
  'POST /outgoing-webhooks/:id/ping': async (team) => ({
    res: await call('POST', `/outgoing-webhooks/${await endpoint(team)}/ping`, {
      token: team.adminToken,
      json: {},
    }),
  }),
  'POST /outgoing-webhooks/deliveries/:deliveryId/redeliver': async (team) => {
    const endpointId = await endpoint(team);
    const deliveryId = await insertDelivery(team.company.id, endpointId, 'succeeded');
    return {
      res: await call('POST', `/outgoing-webhooks/deliveries/${deliveryId}/redeliver`, {
        token: team.adminToken,
        json: {},
      }),
    };
  },
  'POST /rules': async (team) => {
    const k = await keyWithId(team.admin, ['rules:write']);
    const res = await call('POST', '/rules', {
      token: k.token,
      json: { name: 'r', kind: 'not_null', column: 'a' },
    });
    return { res, keyId: k.id };
  },
  'PATCH /rules/:id': async (team) => {
    const id = await rule(team);
    const k = await keyWithId(team.admin, ['rules:write']);
    return { res: await call('PATCH', `/rules/${id}`, { token: k.token, json: { name: 'x' } }), keyId: k.id };
  },
  'DELETE /rules/:id': async (team) => {
    const id = await rule(team);
    const k = await keyWithId(team.admin, ['rules:write']);
    return { res: await call('DELETE', `/rules/${id}`, { token: k.token }), keyId: k.id };
  },
  'POST /files/:id/comments': async (team) => {
    const fileId = await upload(team, 'company');
    return {
      res: await call('POST', `/files/${fileId}/comments`, {
        token: team.employeeToken,
        json: { body: 'hello' },
      }),
    };
  },
  'PATCH /comments/:id': async (team) => ({
    res: await call('PATCH', `/comments/${await comment(team)}`, {
      token: team.adminToken,
      json: { body: 'edited' },
    }),
  }),
  'DELETE /comments/:id': async (team) => ({
    res: await call('DELETE', `/comments/${await comment(team)}`, { token: team.adminToken }),
  }),
  'POST /notifications/:id/read': async (team) => {
    const id = await notificationOf(team);
    const k = await keyWithId(team.admin, ['notifications:read']);
    return {
      res: await call('POST', `/notifications/${id}/read`, { token: k.token, json: {} }),
      keyId: k.id,
    };
  },
  'POST /notifications/read-all': async (team) => {
    await notificationOf(team);
    const k = await keyWithId(team.admin, ['notifications:read']);
    return { res: await call('POST', '/notifications/read-all', { token: k.token, json: {} }), keyId: k.id };
  },
};

const writeRoutes = routes.filter((r) => r.method !== 'get');

describe('audit completeness over the route table', function () {
  this.timeout(180_000);
  let team: Team;

  before(async () => {
    team = await createTeam({ plan: 'premium' });
  });

  it('every write route is either shown to write an entry below or exempt with a reason', () => {
    const missing = writeRoutes.map(key).filter((k) => !SCENARIOS[k] && !EXEMPT[k]);
    expect(missing, 'add a scenario to SCENARIOS, or an entry with its reason to EXEMPT').to.deep.equal([]);
    const both = Object.keys(EXEMPT).filter((k) => SCENARIOS[k]);
    expect(both).to.deep.equal([]);
    const stale = [...Object.keys(SCENARIOS), ...Object.keys(EXEMPT)].filter(
      (k) => !writeRoutes.some((r) => key(r) === k),
    );
    expect(stale, 'entries for routes that no longer exist').to.deep.equal([]);
    for (const [k, reason] of Object.entries(EXEMPT)) expect(reason.length, k).to.be.greaterThan(20);
  });

  for (const route of writeRoutes) {
    const name = key(route);
    if (!SCENARIOS[name]) continue;
    it(`${name} writes its audit entry in the unit of work of its change${route.access.public ? '' : ', naming its actor'}`, async () => {
      const { res, keyId } = await SCENARIOS[name](team);
      expect(res.status, `${name}: ${res.text}`).to.be.within(200, 299);
      const entries = await auditOf(res);
      expect(entries.length, `${name} wrote no audit entry`).to.be.greaterThan(0);
      for (const e of entries) {
        expect(e.outcome).to.equal('success');
        // a demo visitor's entries withhold it: every visitor reads the demo company's audit log
        if (name === 'POST /demo/sessions') expect(e.clientAddress, 'no client address').to.equal(null);
        else expect(e.clientAddress, 'the client address').to.be.a('string');
        if (keyId) {
          expect(e, `${name}: the key that did it`).to.include({ actorApiKeyId: keyId, actorType: 'apiKey' });
          expect(e.actorKeyPrefix).to.match(/^svc_live_/);
          expect(e.actorPersonId).to.equal(team.admin.id);
        } else if (!route.access.public) {
          expect(e.actorType, name).to.be.oneOf(['person', 'system']);
          expect(e.actorApiKeyId).to.equal(null);
        }
      }
    });
  }
});
