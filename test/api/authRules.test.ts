/**
 * One test per rule of the spec's Authentication part and per row of its API key and session state tables.
 * (Capability tests elsewhere go deeper; these name the contract.)
 */
import { expect } from 'chai';
import { SCOPES } from '../../domain/identity/scopes';
import { UNAUTHENTICATED } from '../../api/middlewares/authenticate';
import { routes } from '../../api/routes';
import { createApiKey, createCompany, createPerson, createTeam, signIn } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { tokenFromMail } from '../helpers/mailbox';

const db = () => testEnv().knex;

describe('Authentication rules (spec)', () => {
  it('rules 1 and 4: sign-in is public and limited to 10 attempts a minute per address; the 11th gets 429', async () => {
    const person = await createPerson(await createCompany());
    const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await call('POST', '/auth/login', {
        ip,
        json: { email: person.email, password: i % 2 ? person.password : 'wrong one!' },
      });
      statuses.push(res.status);
    }
    expect(statuses).to.deep.equal([401, 200, 401, 200, 401, 200, 401, 200, 401, 200]);
    const limited = await call('POST', '/auth/login', {
      ip,
      json: { email: person.email, password: person.password },
    });
    expectErrorBody(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    // another address is not affected
    expect(
      (await call('POST', '/auth/login', { json: { email: person.email, password: person.password } }))
        .status,
    ).to.equal(200);
  });

  it('rule 2: 401 with the same message for a wrong password and an unknown address', async () => {
    const person = await createPerson(await createCompany());
    const a = await call('POST', '/auth/login', {
      json: { email: person.email, password: 'wrong password' },
    });
    const b = await call('POST', '/auth/login', {
      json: { email: `x${person.email}`, password: person.password },
    });
    expect(expectErrorBody(a, 401).message).to.equal('invalid email or password');
    expect(expectErrorBody(b, 401).message).to.equal('invalid email or password');
  });

  it('rule 3: 403 when the password is right but the account cannot sign in', async () => {
    const person = await createPerson(await createCompany(), { status: 'disabled' });
    expectErrorBody(
      await call('POST', '/auth/login', { json: { email: person.email, password: person.password } }),
      403,
    );
  });

  it('rule 5: the refresh token is exchanged for a new pair and lasts 30 days', async () => {
    const pair = await signIn(await createPerson(await createCompany()));
    const row = await db()('refreshTokens').orderBy('createdAt', 'desc').first();
    const days = (row.expiresAt.getTime() - Date.now()) / 86_400_000;
    expect(days).to.be.closeTo(30, 0.01);
    expect(
      (await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } })).status,
    ).to.equal(200);
  });

  it('rule 6: a demotion, removal or suspension applies from the next request', async () => {
    const { company, admin, adminToken } = await createTeam();
    expect((await call('GET', '/employees', { token: adminToken })).status).to.equal(200);
    await db()('people').where({ id: admin.id }).update({ role: 'employee' });
    expectErrorBody(await call('GET', '/employees', { token: adminToken }), 403);
    await db()('companies').where({ id: company.id }).update({ status: 'suspended' });
    expectErrorBody(await call('GET', '/api-keys', { token: adminToken }), 403);
  });

  it('rule 7: no token, bad token, expired token, revoked key and owner gone share one 401 message', async () => {
    const { admin, adminToken } = await createTeam();
    const revoked = await createApiKey(admin, ['files:read']);
    await db()('apiKeys').where({ personId: admin.id }).update({ revokedAt: new Date() });
    const ownerGone = await createApiKey((await createTeam()).admin, ['files:read']);
    await db()('people')
      .where({ id: (await db()('apiKeys').orderBy('createdAt', 'desc').first()).personId })
      .delete();
    for (const token of [undefined, 'bad', revoked, ownerGone, `${adminToken}x`]) {
      expect(expectErrorBody(await call('GET', '/_test/whoami', { token }), 401).message).to.equal(
        UNAUTHENTICATED,
      );
    }
  });

  it('rule 8: 403 for role too low, key lacking a scope, suspended company', async () => {
    const { company, admin, employeeToken } = await createTeam();
    expectErrorBody(await call('GET', '/employees', { token: employeeToken }), 403);
    expectErrorBody(
      await call('POST', '/_test/whoami', { token: await createApiKey(admin, ['files:read']) }),
      403,
    );
    await db()('companies').where({ id: company.id }).update({ status: 'suspended' });
    expectErrorBody(await call('GET', '/_test/whoami', { token: employeeToken }), 403);
  });

  it('rule 9: a key can do something only if it holds the scope and its owner may do it', async () => {
    const { employee, admin } = await createTeam();
    // the owner (an employee) may not reach an admin route, even with a key that holds its scope
    const employeeKey = await createApiKey(employee, ['files:read', 'audit:read']);
    expectErrorBody(await call('GET', '/_test/admin-only', { token: employeeKey }), 403);
    const adminKey = await createApiKey(admin, ['audit:read']);
    expect((await call('GET', '/_test/admin-only', { token: adminKey })).status).to.equal(200);
  });

  it('rule 10: an employee who gives a key an admin-only scope gets 403', async () => {
    const { employeeToken } = await createTeam();
    expectErrorBody(
      await call('POST', '/api-keys', {
        token: employeeToken,
        json: { name: 'k', scopes: ['billing:read'] },
      }),
      403,
    );
  });

  it('rule 11: keys are closed by default — every route that names no scope refuses keys', async () => {
    const { admin } = await createTeam();
    const key = await createApiKey(admin, [...SCOPES]); // every scope there is
    const closed = routes.filter((r) => !r.access.public && !r.access.keyScope);
    expect(closed.length).to.be.greaterThan(0);
    for (const r of closed) {
      const path = r.path.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const res = await call(r.method.toUpperCase(), path, {
        token: key,
        json: r.method === 'get' ? undefined : {},
      });
      expect(expectErrorBody(res, 403).message, `${r.method} ${r.path}`).to.equal(
        'API keys are not accepted on this endpoint',
      );
    }
  });

  it('rule 12: keys can never manage keys, people, plans, webhooks or company details, nor change passwords', () => {
    const forbidden =
      /^\/(api-keys|invitations|employees|subscriptions|outgoing-webhooks|companies|auth\/logout|comments|analytics|graphql)/;
    const open = routes.filter(
      (r) => forbidden.test(r.path) && !r.access.public && r.access.keyScope && r.method !== 'get',
    );
    const openReads = routes.filter(
      (r) =>
        /^\/(api-keys|employees|outgoing-webhooks|companies|analytics|graphql)/.test(r.path) &&
        !r.access.public &&
        r.access.keyScope,
    );
    expect(open.map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);
    expect(openReads.map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);
  });

  it('rule 13: a key acts as its owner as they are now', async () => {
    const { admin } = await createTeam();
    const key = await createApiKey(admin, ['files:read', 'audit:read']);
    const who = await call('GET', '/_test/whoami', { token: key });
    expect(who.body).to.include({ kind: 'key', personId: admin.id, role: 'admin' });
    await db()('people').where({ id: admin.id }).update({ role: 'employee' });
    const after = await call('GET', '/_test/whoami', { token: key });
    expect(after.body).to.include({ role: 'employee' });
    expect(after.body.scopes).to.deep.equal(['files:read']);
  });
});

describe('API key states (spec table)', () => {
  it('active → DELETE (admin, any key) → revoked: later requests get 401', async () => {
    const { employee, adminToken } = await createTeam();
    const token = await createApiKey(employee, ['files:read']);
    const id = (await db()('apiKeys').where({ personId: employee.id }).first()).id;
    expect((await call('DELETE', `/api-keys/${id}`, { token: adminToken })).status).to.equal(204);
    expectErrorBody(await call('GET', '/_test/whoami', { token }), 401);
  });

  it('active → DELETE (employee, own key) → revoked; another person’s key → 404', async () => {
    const { admin, employee, employeeToken } = await createTeam();
    await createApiKey(employee, ['files:read']);
    await createApiKey(admin, ['files:read']);
    const own = (await db()('apiKeys').where({ personId: employee.id }).first()).id;
    const theirs = (await db()('apiKeys').where({ personId: admin.id }).first()).id;
    expect((await call('DELETE', `/api-keys/${own}`, { token: employeeToken })).status).to.equal(204);
    expectErrorBody(await call('DELETE', `/api-keys/${theirs}`, { token: employeeToken }), 404);
  });

  it('revoked → DELETE again → revoked, no error', async () => {
    const { admin, adminToken } = await createTeam();
    await createApiKey(admin, ['files:read']);
    const id = (await db()('apiKeys').where({ personId: admin.id }).first()).id;
    expect((await call('DELETE', `/api-keys/${id}`, { token: adminToken })).status).to.equal(204);
    expect((await call('DELETE', `/api-keys/${id}`, { token: adminToken })).status).to.equal(204);
  });

  it('an active key stops working when its owner is disabled, and loses admin scopes when the owner is demoted', async () => {
    const { admin } = await createTeam();
    const key = await createApiKey(admin, ['files:read', 'audit:read']);
    await db()('people').where({ id: admin.id }).update({ role: 'employee' });
    expectErrorBody(await call('GET', '/_test/admin-only', { token: key }), 403);
    await db()('people').where({ id: admin.id }).update({ status: 'disabled' });
    expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 401);
  });
});

describe('Session states (spec)', () => {
  it('a session begins at sign-in', async () => {
    const person = await createPerson(await createCompany());
    const res = await call('POST', '/auth/login', {
      json: { email: person.email, password: person.password },
    });
    expect(res.status).to.equal(200);
    expect(await db()('sessions').where({ personId: person.id, method: 'password' })).to.have.lengthOf(1);
  });

  it('a session begins at accepting an invitation', async () => {
    const { adminToken } = await createTeam({ plan: 'basic' });
    const email = `inv-${Date.now()}@example.test`;
    await call('POST', '/invitations', { token: adminToken, json: { email, role: 'employee' } });
    const token = await tokenFromMail(email, /invited/);
    const res = await call('POST', '/auth/accept-invite', { json: { token, password: 'a fine password' } });
    expect(res.body.tokenType).to.equal('Bearer');
    const personId = (await call('GET', '/_test/whoami', { token: res.body.accessToken })).body.personId;
    expect(await db()('sessions').where({ personId, method: 'invitation' })).to.have.lengthOf(1);
  });

  it('the access token lives 900 seconds', async () => {
    const pair = await signIn(await createPerson(await createCompany()));
    const payload = JSON.parse(Buffer.from(pair.accessToken.split('.')[1], 'base64url').toString()) as {
      iat: number;
      exp: number;
    };
    expect(payload.exp - payload.iat).to.equal(900);
    expect(pair.expiresIn).to.equal(900);
  });

  it('POST /auth/logout ends the session at once', async () => {
    const pair = await signIn(await createPerson(await createCompany()));
    await call('POST', '/auth/logout', {
      token: pair.accessToken,
      json: { refreshToken: pair.refreshToken },
    });
    expectErrorBody(await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }), 401);
  });

  it('account states that refuse sign-in are reasons for 403: not activated, disabled, company not active', async () => {
    const company = await createCompany({ status: 'suspended' });
    const p = await createPerson(company);
    expect(
      expectErrorBody(
        await call('POST', '/auth/login', { json: { email: p.email, password: p.password } }),
        403,
      ).message,
    ).to.equal('the company is not active');
  });
});
