import { expect } from 'chai';
import { UNAUTHENTICATED } from '../../api/middlewares/authenticate';
import { createApiKey, createTeam } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';

describe('API keys', () => {
  describe('POST /api-keys', () => {
    it('creates a key shown once in the svc_live_<identifier>_<secret> format and stores only a fingerprint', async () => {
      const { adminToken } = await createTeam();
      const res = await call('POST', '/api-keys', {
        token: adminToken,
        json: { name: 'ci', scopes: ['files:read'] },
      });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.key).to.match(/^svc_live_[A-Za-z0-9]{12}_[A-Za-z0-9]{40}$/);
      expect(res.body.prefix).to.equal(res.body.key.slice(0, 21));
      expect(res.body).to.include({ name: 'ci', lastUsedAt: null });
      expect(res.body.scopes).to.deep.equal(['files:read']);
      const row = await testEnv().knex('apiKeys').where({ id: res.body.id }).first();
      expect(JSON.stringify(row)).not.to.include(res.body.key.slice(22));
      const list = await call('GET', '/api-keys', { token: adminToken });
      expect(list.text).not.to.include(res.body.key);
      expect(list.body.data[0]).to.not.have.property('key');
    });

    it('validates name and scopes, listing every mistake', async () => {
      const { adminToken } = await createTeam();
      const cases: Array<[unknown, string | string[]]> = [
        [{ scopes: ['files:read'] }, 'body.name is required'],
        [{ name: 'x'.repeat(81), scopes: ['files:read'] }, 'body.name must NOT have more than 80 characters'],
        [{ name: 'k' }, 'body.scopes is required'],
        [{ name: 'k', scopes: [] }, 'body.scopes must NOT have fewer than 1 items'],
        [{ name: 'k', scopes: ['files:read', 'files:read'] }, 'body.scopes must not repeat items'],
        [
          { name: 'k', scopes: ['files:delete'] },
          `body.scopes[0] must be one of files:read, files:write, notifications:read, mcp, billing:read, rules:write, audit:read`,
        ],
        [
          { name: '', scopes: ['files:read'], extra: 1 },
          ['body.name must NOT have fewer than 1 characters', 'body: unknown field "extra"'],
        ],
      ];
      for (const [json, message] of cases) {
        const res = await call('POST', '/api-keys', { token: adminToken, json });
        const got = expectErrorBody(res, 400).message;
        if (Array.isArray(message)) expect(got, JSON.stringify(json)).to.have.members(message);
        else expect(got, JSON.stringify(json)).to.equal(message);
      }
    });

    it('rule 10: an employee giving a key an admin-only scope gets 403', async () => {
      const { employeeToken } = await createTeam();
      for (const scope of ['billing:read', 'rules:write', 'audit:read']) {
        const res = await call('POST', '/api-keys', {
          token: employeeToken,
          json: { name: 'k', scopes: ['files:read', scope] },
        });
        expect(expectErrorBody(res, 403).message).to.equal(`only admins may give the scopes ${scope}`);
      }
      const ok = await call('POST', '/api-keys', {
        token: employeeToken,
        json: { name: 'k', scopes: ['files:read', 'mcp'] },
      });
      expect(ok.status).to.equal(201);
    });

    it('rule 12: a key cannot create, list or revoke keys', async () => {
      const { admin } = await createTeam();
      const key = await createApiKey(admin, ['files:read', 'files:write', 'audit:read']);
      expect(
        expectErrorBody(
          await call('POST', '/api-keys', { token: key, json: { name: 'k', scopes: ['files:read'] } }),
          403,
        ).message,
      ).to.equal('API keys are not accepted on this endpoint');
      expectErrorBody(await call('GET', '/api-keys', { token: key }), 403);
    });
  });

  describe('GET /api-keys', () => {
    it('lists newest first; admin sees the company’s keys, employee only own; another company sees none', async () => {
      const { admin, employee, adminToken, employeeToken } = await createTeam();
      const other = await createTeam();
      await call('POST', '/api-keys', { token: adminToken, json: { name: 'a1', scopes: ['files:read'] } });
      await call('POST', '/api-keys', { token: employeeToken, json: { name: 'e1', scopes: ['files:read'] } });
      await call('POST', '/api-keys', { token: adminToken, json: { name: 'a2', scopes: ['files:read'] } });
      await call('POST', '/api-keys', {
        token: other.adminToken,
        json: { name: 'x', scopes: ['files:read'] },
      });
      const asAdmin = await call('GET', '/api-keys', { token: adminToken });
      expect(asAdmin.body.data.map((k: { name: string }) => k.name)).to.deep.equal(['a2', 'e1', 'a1']);
      expect(asAdmin.body.meta).to.deep.equal({ page: 1, limit: 20, total: 3, totalPages: 1 });
      const asEmployee = await call('GET', '/api-keys', { token: employeeToken });
      expect(asEmployee.body.data.map((k: { ownerId: string }) => k.ownerId)).to.deep.equal([employee.id]);
      const paged = await call('GET', '/api-keys?page=2&limit=2', { token: adminToken });
      expect(paged.body.data.map((k: { name: string }) => k.name)).to.deep.equal(['a1']);
      expect(paged.body.meta).to.deep.equal({ page: 2, limit: 2, total: 3, totalPages: 2 });
      expect(admin.companyId).to.not.equal(other.company.id);
    });

    it('refuses a bad page or limit with 400', async () => {
      const { adminToken } = await createTeam();
      for (const q of ['page=0', 'limit=0', 'limit=101', 'page=abc', 'cursor=x']) {
        expectErrorBody(await call('GET', `/api-keys?${q}`, { token: adminToken }), 400);
      }
    });

    it('shows lastUsedAt after the key is used', async () => {
      const { admin, adminToken } = await createTeam();
      const key = await createApiKey(admin, ['files:read']);
      expect((await call('GET', '/_test/whoami', { token: key })).status).to.equal(200);
      const list = await call('GET', '/api-keys', { token: adminToken });
      expect(Date.parse(list.body.data[0].lastUsedAt)).to.be.closeTo(Date.now(), 10_000);
    });
  });

  describe('DELETE /api-keys/{id}', () => {
    it('revokes: later requests with the key get 401; revoking twice is allowed', async () => {
      const { adminToken } = await createTeam();
      const created = (
        await call('POST', '/api-keys', { token: adminToken, json: { name: 'k', scopes: ['files:read'] } })
      ).body;
      expect((await call('GET', '/_test/whoami', { token: created.key })).status).to.equal(200);
      expect((await call('DELETE', `/api-keys/${created.id}`, { token: adminToken })).status).to.equal(204);
      expect(
        expectErrorBody(await call('GET', '/_test/whoami', { token: created.key }), 401).message,
      ).to.equal(UNAUTHENTICATED);
      expect((await call('DELETE', `/api-keys/${created.id}`, { token: adminToken })).status).to.equal(204);
    });

    it('admin revokes any key of the company; an employee only own (another person’s gives 404); another company’s gives 404', async () => {
      const { admin, employee, adminToken, employeeToken } = await createTeam();
      const other = await createTeam();
      const adminKey = (
        await call('POST', '/api-keys', { token: adminToken, json: { name: 'a', scopes: ['files:read'] } })
      ).body;
      const employeeKey = (
        await call('POST', '/api-keys', { token: employeeToken, json: { name: 'e', scopes: ['files:read'] } })
      ).body;
      expectErrorBody(await call('DELETE', `/api-keys/${adminKey.id}`, { token: employeeToken }), 404);
      expectErrorBody(await call('DELETE', `/api-keys/${adminKey.id}`, { token: other.adminToken }), 404);
      expect((await call('DELETE', `/api-keys/${employeeKey.id}`, { token: adminToken })).status).to.equal(
        204,
      );
      expect((await call('DELETE', `/api-keys/${adminKey.id}`, { token: adminToken })).status).to.equal(204);
      expect(admin.id).to.not.equal(employee.id);
    });
  });

  describe('a key acts as its owner is now (rules 9, 11, 13)', () => {
    it('needs the route’s scope; refused (403) where the route names no scope', async () => {
      const { admin } = await createTeam();
      const readOnly = await createApiKey(admin, ['files:read']);
      expect((await call('GET', '/_test/whoami', { token: readOnly })).status).to.equal(200);
      expect(expectErrorBody(await call('POST', '/_test/whoami', { token: readOnly }), 403).message).to.equal(
        'the API key lacks the scope files:write',
      );
    });

    it('owner disabled or removed → 401; owner demoted → admin scopes lost (403); company suspended → 403', async () => {
      const { company, admin } = await createTeam();
      const key = await createApiKey(admin, ['files:read', 'audit:read']);
      expect((await call('GET', '/_test/admin-only', { token: key })).status).to.equal(200);
      await testEnv().knex('people').where({ id: admin.id }).update({ role: 'employee' });
      expectErrorBody(await call('GET', '/_test/admin-only', { token: key }), 403);
      expect((await call('GET', '/_test/whoami', { token: key })).status).to.equal(200);
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'suspended' });
      expect(expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 403).message).to.equal(
        'the company is suspended',
      );
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'active' });
      await testEnv().knex('people').where({ id: admin.id }).update({ status: 'disabled' });
      expect(expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 401).message).to.equal(
        UNAUTHENTICATED,
      );
      await testEnv().knex('people').where({ id: admin.id }).delete();
      expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 401);
    });

    it('a well-formed key with a wrong secret or unknown identifier gets 401', async () => {
      const { admin } = await createTeam();
      const key = await createApiKey(admin, ['files:read']);
      const wrongSecret = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
      expectErrorBody(await call('GET', '/_test/whoami', { token: wrongSecret }), 401);
      expectErrorBody(
        await call('GET', '/_test/whoami', { token: 'svc_live_AAAAAAAAAAAA_' + 'a'.repeat(40) }),
        401,
      );
      expectErrorBody(await call('GET', '/_test/whoami', { token: 'svc_live_short' }), 401);
    });
  });

  describe('audit', () => {
    it('records who created and revoked a key, with the correlation id', async () => {
      const { admin, adminToken } = await createTeam();
      const created = await call('POST', '/api-keys', {
        token: adminToken,
        json: { name: 'audited', scopes: ['files:read'] },
        headers: { 'X-Request-Id': 'audit-create-1' },
      });
      await call('DELETE', `/api-keys/${created.body.id}`, {
        token: adminToken,
        headers: { 'X-Request-Id': 'audit-revoke-1' },
      });
      const rows = await testEnv()
        .knex('auditLog')
        .where({ resourceId: created.body.id })
        .orderBy('createdAt');
      expect(rows.map((r: { action: string }) => r.action)).to.deep.equal([
        'api_key.created',
        'api_key.revoked',
      ]);
      expect(rows[0]).to.include({ actorPersonId: admin.id, correlationId: 'audit-create-1' });
      expect(rows[1]).to.include({ actorPersonId: admin.id, correlationId: 'audit-revoke-1' });
    });
  });
});
