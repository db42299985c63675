import { expect } from 'chai';
import { createApiKey, createCompany, createPerson, createTeam, tokenFor } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { tokenFromMail } from '../helpers/mailbox';

const unique = () => `${Math.random().toString(36).slice(2)}@example.test`;

describe('people: invitations and management', () => {
  it('invites by e-mail; accepting creates the login and signs the person in with the invited role', async () => {
    const { company, adminToken } = await createTeam({ plan: 'basic' });
    const email = unique();
    const invited = await call('POST', '/invitations', {
      token: adminToken,
      json: { email, role: 'employee', name: 'Eve' },
    });
    expect(invited.status, invited.text).to.equal(201);
    expect(invited.body).to.include({ email, role: 'employee', status: 'not_activated', name: 'Eve' });
    const token = await tokenFromMail(email, /invited/);
    const accepted = await call('POST', '/auth/accept-invite', {
      json: { token, password: 'my own password' },
    });
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body.expiresIn).to.equal(900);
    const who = await call('GET', '/_test/whoami', { token: accepted.body.accessToken });
    expect(who.body).to.include({ companyId: company.id, role: 'employee', personId: invited.body.id });
    // once only
    expectErrorBody(
      await call('POST', '/auth/accept-invite', { json: { token, password: 'my own password' } }),
      401,
    );
    expect(
      (await call('POST', '/auth/login', { json: { email, password: 'my own password' } })).status,
    ).to.equal(200);
  });

  it('refuses a bad invitation token with 401', async () => {
    expectErrorBody(
      await call('POST', '/auth/accept-invite', { json: { token: 'nope', password: 'whatever long' } }),
      401,
    );
  });

  it('the plan’s limit on people gives 409 (Free allows 3, a company without a plan too)', async () => {
    const { adminToken } = await createTeam({ plan: 'free' }); // admin + employee = 2
    expect(
      (await call('POST', '/invitations', { token: adminToken, json: { email: unique(), role: 'employee' } }))
        .status,
    ).to.equal(201);
    const over = await call('POST', '/invitations', {
      token: adminToken,
      json: { email: unique(), role: 'employee' },
    });
    expect(expectErrorBody(over, 409).message).to.equal('the free plan allows 3 people');
    const noPlan = await createTeam({ plan: null });
    await call('POST', '/invitations', {
      token: noPlan.adminToken,
      json: { email: unique(), role: 'admin' },
    });
    expectErrorBody(
      await call('POST', '/invitations', {
        token: noPlan.adminToken,
        json: { email: unique(), role: 'admin' },
      }),
      409,
    );
  });

  it('parallel invitations at the limit cannot both pass', async () => {
    const { adminToken } = await createTeam({ plan: 'free' });
    const results = await Promise.all(
      [0, 1, 2, 3].map(() =>
        call('POST', '/invitations', { token: adminToken, json: { email: unique(), role: 'employee' } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).to.have.lengthOf(1);
    expect(results.filter((r) => r.status === 409)).to.have.lengthOf(3);
  });

  it('an already registered address gives 409; employees and keys cannot invite (403)', async () => {
    const { admin, adminToken, employeeToken } = await createTeam({ plan: 'basic' });
    expectErrorBody(
      await call('POST', '/invitations', {
        token: adminToken,
        json: { email: admin.email, role: 'employee' },
      }),
      409,
    );
    expectErrorBody(
      await call('POST', '/invitations', {
        token: employeeToken,
        json: { email: unique(), role: 'employee' },
      }),
      403,
    );
    const key = await createApiKey(admin, ['files:read', 'files:write', 'audit:read']);
    expectErrorBody(
      await call('POST', '/invitations', { token: key, json: { email: unique(), role: 'employee' } }),
      403,
    );
  });

  it('GET /employees lists the company’s people (page-number) and nobody else’s', async () => {
    const { admin, employee, adminToken } = await createTeam({ plan: 'basic' });
    await createTeam();
    const res = await call('GET', '/employees', { token: adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).to.deep.equal([admin.id, employee.id]);
    expect(res.body.meta).to.deep.equal({ page: 1, limit: 20, total: 2, totalPages: 1 });
    expect(res.body.data[0]).to.not.have.property('passwordHash');
  });

  it('changes a role; the demotion applies from the next request', async () => {
    const { employee, adminToken, employeeToken } = await createTeam({ plan: 'basic' });
    expectErrorBody(await call('GET', '/employees', { token: employeeToken }), 403);
    const promoted = await call('PATCH', `/employees/${employee.id}`, {
      token: adminToken,
      json: { role: 'admin' },
    });
    expect(promoted.status, promoted.text).to.equal(200);
    expect(promoted.body.role).to.equal('admin');
    expect((await call('GET', '/employees', { token: employeeToken })).status).to.equal(200);
  });

  it('disables and re-enables a person; the disabled person’s tokens and keys get 401', async () => {
    const { employee, adminToken, employeeToken } = await createTeam({ plan: 'basic' });
    const key = await createApiKey(employee, ['files:read']);
    expect(
      (await call('PATCH', `/employees/${employee.id}`, { token: adminToken, json: { status: 'disabled' } }))
        .status,
    ).to.equal(200);
    expectErrorBody(await call('GET', '/_test/whoami', { token: employeeToken }), 401);
    expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 401);
    expect(
      (await call('PATCH', `/employees/${employee.id}`, { token: adminToken, json: { status: 'active' } }))
        .status,
    ).to.equal(200);
    expect((await call('GET', '/_test/whoami', { token: key })).status).to.equal(200);
  });

  it('removes a person: later requests with their tokens or keys get 401, reads give 404', async () => {
    const { employee, adminToken, employeeToken } = await createTeam({ plan: 'basic' });
    const key = await createApiKey(employee, ['files:read']);
    expect((await call('DELETE', `/employees/${employee.id}`, { token: adminToken })).status).to.equal(204);
    expectErrorBody(await call('GET', '/_test/whoami', { token: employeeToken }), 401);
    expectErrorBody(await call('GET', '/_test/whoami', { token: key }), 401);
    expectErrorBody(await call('DELETE', `/employees/${employee.id}`, { token: adminToken }), 404);
    const audit = await testEnv()
      .knex('auditLog')
      .where({ resourceId: employee.id, action: 'person.removed' });
    expect(audit).to.have.lengthOf(1);
  });

  it('keeps at least one active admin (409)', async () => {
    const { admin, adminToken } = await createTeam({ plan: 'basic' });
    expectErrorBody(
      await call('PATCH', `/employees/${admin.id}`, { token: adminToken, json: { role: 'employee' } }),
      409,
    );
    expectErrorBody(
      await call('PATCH', `/employees/${admin.id}`, { token: adminToken, json: { status: 'disabled' } }),
      409,
    );
    expectErrorBody(await call('DELETE', `/employees/${admin.id}`, { token: adminToken }), 409);
  });

  it('another company’s person gives 404', async () => {
    const { adminToken } = await createTeam({ plan: 'basic' });
    const other = await createPerson(await createCompany(), { role: 'employee' });
    expectErrorBody(
      await call('PATCH', `/employees/${other.id}`, { token: adminToken, json: { role: 'admin' } }),
      404,
    );
    expectErrorBody(await call('DELETE', `/employees/${other.id}`, { token: adminToken }), 404);
  });
});

describe('company details', () => {
  it('an admin reads and changes the company; an employee and keys cannot', async () => {
    const { company, admin, adminToken, employeeToken } = await createTeam();
    const read = await call('GET', '/companies/me', { token: adminToken });
    expect(read.body).to.include({ id: company.id, status: 'active', plan: 'free' });
    const changed = await call('PATCH', '/companies/me', { token: adminToken, json: { name: 'Renamed' } });
    expect(changed.body.name).to.equal('Renamed');
    expectErrorBody(await call('PATCH', '/companies/me', { token: employeeToken, json: { name: 'x' } }), 403);
    const key = await createApiKey(admin, [
      'files:read',
      'files:write',
      'audit:read',
      'billing:read',
      'rules:write',
    ]);
    expectErrorBody(await call('PATCH', '/companies/me', { token: key, json: { name: 'x' } }), 403);
    expectErrorBody(await call('PATCH', '/companies/me', { token: adminToken, json: {} }), 400);
    expect(await tokenFor(admin)).to.be.a('string');
  });
});
