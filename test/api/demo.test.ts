import { expect } from 'chai';
import { DEMO_SEED_STEPS, seedDemoCompany, type DemoSeedStep } from '../../domain/identity/demo';
import { createApiKey, createTeam } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';

async function openDemo() {
  const res = await call('POST', '/demo/sessions');
  expect(res.status, res.text).to.equal(201);
  return res.body as { accessToken: string; refreshToken: string; tokenType: string; expiresIn: number };
}

async function demoCompanies() {
  return testEnv().knex('companies').where({ isDemo: true });
}

describe('demo: POST /demo/sessions', () => {
  it('gives a read-only session on the demo company with sample data: reads work, every write is 403', async () => {
    const pair = await openDemo();
    expect(Object.keys(pair).sort()).to.deep.equal(['accessToken', 'expiresIn', 'refreshToken', 'tokenType']);
    expect(pair).to.include({ tokenType: 'Bearer', expiresIn: 900 });

    const [demo] = await demoCompanies();
    expect(demo).to.include({ name: 'Demo Company', status: 'active', plan: 'premium' });
    const who = await call('GET', '/_test/whoami', { token: pair.accessToken });
    expect(who.status, who.text).to.equal(200);
    expect(who.body).to.include({ kind: 'session', companyId: demo.id, role: 'admin', demo: true });

    const keys = await call('GET', '/api-keys', { token: pair.accessToken });
    expect(keys.status, keys.text).to.equal(200);
    expect(keys.body.data.map((k: { name: string }) => k.name).sort()).to.deep.equal([
      'Audit export',
      'Dashboard reader',
      'Nightly import',
    ]);
    const people = await testEnv().knex('people').where({ companyId: demo.id });
    expect(people.length).to.be.at.least(5);
    expect(people.every((p: { passwordHash: string | null }) => p.passwordHash === null)).to.equal(true);

    const token = pair.accessToken;
    const writes = [
      await call('POST', '/api-keys', { token, json: { name: 'mine', scopes: ['files:read'] } }),
      await call('POST', '/_test/whoami', { token }),
      await call('DELETE', `/api-keys/${keys.body.data[0].id}`, { token }),
    ];
    for (const res of writes) expect(expectErrorBody(res, 403).message).to.equal('the demo is read-only');
    // GraphQL is read-only whatever its transport: POST answers as GET does
    const query = '{ files { nodes { originalName } } }';
    const posted = await call('POST', '/graphql', { token, json: { query } });
    const got = await call('GET', `/graphql?query=${encodeURIComponent(query)}`, { token });
    expect(posted.status, posted.text).to.equal(200);
    expect(posted.body.data.files.nodes.length).to.be.at.least(1);
    expect(posted.body).to.deep.equal(got.body);
    const stillThere = await testEnv().knex('apiKeys').where({ id: keys.body.data[0].id }).first();
    expect(stillThere.revokedAt).to.equal(null);
    expect(await testEnv().knex('apiKeys').where({ companyId: demo.id })).to.have.length(3);

    // the session stays read-only after a refresh, and signing out is allowed
    const refreshed = await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } });
    expect(refreshed.status, refreshed.text).to.equal(200);
    expectErrorBody(await call('POST', '/_test/whoami', { token: refreshed.body.accessToken }), 403);
    const out = await call('POST', '/auth/logout', {
      token: refreshed.body.accessToken,
      json: { refreshToken: refreshed.body.refreshToken },
    });
    expect(out.status, out.text).to.equal(204);
  });

  it("records no visitor's client address: every visitor reads the demo company's audit log", async () => {
    const ip = '198.51.100.77';
    const opened = await call('POST', '/demo/sessions', { ip });
    expect(opened.status, opened.text).to.equal(201);
    const pair = opened.body as { accessToken: string; refreshToken: string };
    const refreshed = await call('POST', '/auth/refresh', { ip, json: { refreshToken: pair.refreshToken } });
    expect(refreshed.status, refreshed.text).to.equal(200);
    // the first refresh token again: reuse, audited (and the session ended)
    const reused = await call('POST', '/auth/refresh', { ip, json: { refreshToken: pair.refreshToken } });
    expect(reused.status, reused.text).to.equal(401);
    const other = await openDemo();
    const out = await call('POST', '/auth/logout', {
      ip,
      token: other.accessToken,
      json: { refreshToken: other.refreshToken },
    });
    expect(out.status, out.text).to.equal(204);

    const [demo] = await demoCompanies();
    const entries = (await testEnv()
      .knex('auditLog')
      .where({ companyId: demo.id })
      .whereIn('action', ['session.started', 'session.ended', 'session.refresh_token_reused'])) as Array<{
      action: string;
      clientAddress: string | null;
      correlationId: string | null;
    }>;
    expect(new Set(entries.map((e) => e.action))).to.deep.equal(
      new Set(['session.started', 'session.ended', 'session.refresh_token_reused']),
    );
    expect(entries.filter((e) => e.clientAddress !== null)).to.deep.equal([]);
    // as a visitor reads it
    const log = await call('GET', '/audit-log?limit=100', { token: other.accessToken });
    expect(log.status, log.text).to.equal(200);
    expect(log.body.data.length).to.be.at.least(1);
    expect(log.body.data.filter((e: { clientAddress: unknown }) => e.clientAddress !== null)).to.deep.equal(
      [],
    );
    // a company of its own still records its people's addresses
    const team = await createTeam();
    const signIn = await call('POST', '/auth/login', {
      ip,
      json: { email: team.admin.email, password: team.admin.password },
    });
    expect(signIn.status, signIn.text).to.equal(200);
    const own = await testEnv()
      .knex('auditLog')
      .where({ companyId: team.company.id, action: 'session.started', clientAddress: ip });
    expect(own).to.have.length(1);
  });

  it("counts each visitor's requests per address: one visitor does not spend another's budget", async () => {
    const [ip1, ip2] = ['198.51.100.11', '198.51.100.12'];
    const open = async (ip: string) => {
      const res = await call('POST', '/demo/sessions', { ip });
      expect(res.status, res.text).to.equal(201);
      return res.body as { accessToken: string; refreshToken: string };
    };
    const remaining = async (ip: string, token: string) => {
      const res = await call('GET', '/files', { ip, token });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('300');
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    const a = await open(ip1);
    const b = await open(ip2);
    const a1 = await remaining(ip1, a.accessToken);
    expect(await remaining(ip1, a.accessToken)).to.equal(a1 - 1);
    const b1 = await remaining(ip2, b.accessToken);
    expect(b1, "another visitor's budget").to.be.greaterThan(a1 - 1);
    // a refreshed demo token is still counted per address
    const refreshed = await call('POST', '/auth/refresh', {
      ip: ip1,
      json: { refreshToken: a.refreshToken },
    });
    expect(refreshed.status, refreshed.text).to.equal(200);
    expect(await remaining(ip1, refreshed.body.accessToken)).to.equal(a1 - 2);
    expect(await remaining(ip2, b.accessToken)).to.equal(b1 - 1);
  });

  it('creates the demo company once under simultaneous first openings, then reuses it', async () => {
    // an operator's reset: the demo company and everything in it go; the next opening seeds afresh
    await testEnv().knex('companies').where({ isDemo: true }).delete();
    const pairs = await Promise.all(Array.from({ length: 6 }, () => openDemo()));
    const demos = await demoCompanies();
    expect(demos).to.have.length(1);
    const [demo] = demos;
    for (const pair of pairs) {
      const who = await call('GET', '/_test/whoami', { token: pair.accessToken });
      expect(who.body).to.include({ companyId: demo.id, demo: true });
    }
    const countPeople = async () =>
      Number((await testEnv().knex('people').where({ companyId: demo.id }).count({ n: '*' }))[0].n);
    const peopleBefore = await countPeople();
    expect(peopleBefore).to.equal(5);
    await openDemo();
    await openDemo();
    expect(await demoCompanies()).to.have.length(1);
    expect(await countPeople()).to.equal(peopleBefore);
    const steps = await testEnv().knex('demoSeedSteps').where({ companyId: demo.id }).orderBy('name');
    expect(steps.map((s: { name: string }) => s.name)).to.deep.equal(
      DEMO_SEED_STEPS.map((s) => s.name).sort(),
    );
    expect(await testEnv().knex('apiKeys').where({ companyId: demo.id })).to.have.length(3);
    // every opening is its own session
    const sessions = await testEnv()
      .knex('sessions')
      .where({ companyId: demo.id, demo: true, method: 'demo' });
    expect(sessions).to.have.length(8);
  });

  it('applies a seed step added later to the existing demo company, once', async () => {
    await openDemo();
    let runs = 0;
    const later: DemoSeedStep = {
      name: `later-step-${Date.now()}`,
      async run({ trx, companyId }) {
        runs += 1;
        await trx('companies').where({ id: companyId }).update({ updatedAt: trx.fn.now() });
      },
    };
    const { knex, config } = testEnv();
    const [before] = await demoCompanies();
    const first = await seedDemoCompany(knex, config.secretKey, [...DEMO_SEED_STEPS, later]);
    const second = await seedDemoCompany(knex, config.secretKey, [...DEMO_SEED_STEPS, later]);
    expect(first).to.deep.equal(second);
    expect(first.companyId).to.equal(before.id);
    expect(runs).to.equal(1);
  });

  it('a seeding whose after-commit work hangs (a Temporal that does not answer) returns after the wait', async () => {
    await openDemo();
    let hookStarted = false;
    let nextHookRan = false;
    const hanging: DemoSeedStep = {
      name: `hanging-hook-${Date.now()}`,
      async run(ctx) {
        // e.g. a report's workflow start against a server that accepts connections and never answers
        ctx.afterCommit(() => {
          hookStarted = true;
          return new Promise<void>(() => undefined);
        });
        ctx.afterCommit(async () => {
          nextHookRan = true;
        });
      },
    };
    const { knex, config } = testEnv();
    const started = Date.now();
    const seeded = await seedDemoCompany(knex, config.secretKey, [...DEMO_SEED_STEPS, hanging]);
    expect(Date.now() - started, 'returned after the wait (5 s), not never').to.be.below(9_000);
    expect(seeded.companyId).to.be.a('string');
    expect(hookStarted).to.equal(true);
    expect(nextHookRan, 'the hook after it still runs').to.equal(true);
  });

  it('is isolated from other companies in both directions', async () => {
    const pair = await openDemo();
    const [demo] = await demoCompanies();
    const team = await createTeam();
    await createApiKey(team.admin, ['files:read'], 'real company key');

    const demoList = await call('GET', '/api-keys', { token: pair.accessToken });
    expect(demoList.body.data.map((k: { name: string }) => k.name)).to.not.include('real company key');
    const realList = await call('GET', '/api-keys', { token: team.adminToken });
    expect(realList.body.data.map((k: { name: string }) => k.name)).to.deep.equal(['real company key']);
    // a demo key id is "not found" for the other company, and its write is its own
    const demoKey = demoList.body.data[0].id;
    expectErrorBody(await call('DELETE', `/api-keys/${demoKey}`, { token: team.adminToken }), 404);
    const other = await call('GET', '/_test/whoami', { token: team.adminToken });
    expect(other.body).to.include({ companyId: team.company.id, demo: false });
    expect(team.company.id).to.not.equal(demo.id);
    // a real company's writes still work
    const created = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'still writable', scopes: ['files:read'] },
    });
    expect(created.status, created.text).to.equal(201);
  });

  it('answers 403 while an operator has closed the demo (company suspended), and 404 when DEMO_ENABLED=false', async () => {
    await openDemo();
    const [demo] = await demoCompanies();
    const { knex, config } = testEnv();
    try {
      await knex('companies').where({ id: demo.id }).update({ status: 'suspended' });
      expect(expectErrorBody(await call('POST', '/demo/sessions'), 403).message).to.equal(
        'the demo is closed',
      );
    } finally {
      await knex('companies').where({ id: demo.id }).update({ status: 'active' });
    }
    try {
      config.demoEnabled = false;
      expect(expectErrorBody(await call('POST', '/demo/sessions'), 404).message).to.equal(
        'the demo is not enabled on this service',
      );
    } finally {
      config.demoEnabled = true;
    }
    await openDemo();
  });

  it('takes no body', async () => {
    const res = await call('POST', '/demo/sessions', { json: { company: 'x' } });
    expect(expectErrorBody(res, 400).message).to.equal('body: unknown field "company"');
  });
});
