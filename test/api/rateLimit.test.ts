import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { routes } from '../../api/routes';
import { BUCKETS, type BucketName } from '../../domain/plans/plans';
import knexFactory from 'knex';
import { addressSubject, chooseBudget } from '../../api/middlewares/rateLimit';
import { resolveClientAddress } from '../../api/middlewares/clientAddress';
import { apiClient } from '../helpers/client';
import { createApiKey, createCompany, createPerson, createTeam, tokenFor } from '../helpers/factories';
import { call, expectErrorBody, randomClientAddress, type HttpResponse } from '../helpers/http';
import { startApiProcess, startApp } from '../helpers/servers';
import { testEnv } from '../helpers/env';

function limits(res: HttpResponse) {
  return {
    limit: Number(res.headers.get('x-ratelimit-limit')),
    remaining: Number(res.headers.get('x-ratelimit-remaining')),
    reset: Number(res.headers.get('x-ratelimit-reset')),
  };
}

function expectHeaders(res: HttpResponse, limit: number) {
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(res.headers.get(h), `${h} on ${res.status}`).to.match(/^\d+$/);
  }
  const l = limits(res);
  expect(l.limit).to.equal(limit);
  expect(l.reset).to.be.within(1, 60);
  return l;
}

function statuses(responses: HttpResponse[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

describe('request budgets and buckets', () => {
  describe('pure parts', () => {
    it('client address: the socket unless trusted hops say otherwise', () => {
      expect(resolveClientAddress('::ffff:10.0.0.5', '1.2.3.4', 0)).to.equal('10.0.0.5');
      expect(resolveClientAddress('10.0.0.5', '1.2.3.4', 1)).to.equal('1.2.3.4');
      // a client-supplied entry on the left is ignored: only the last `hops` entries come from proxies
      expect(resolveClientAddress('10.0.0.5', '6.6.6.6, 1.2.3.4', 1)).to.equal('1.2.3.4');
      expect(resolveClientAddress('10.0.0.5', '6.6.6.6, 1.2.3.4, 10.0.0.4', 2)).to.equal('1.2.3.4');
      expect(resolveClientAddress('10.0.0.5', 'not-an-address', 1)).to.equal('10.0.0.5');
      expect(resolveClientAddress('10.0.0.5', '[2001:db8::1]', 1)).to.equal('2001:db8::1');
    });

    it('IPv6 clients are counted by their /64', () => {
      expect(addressSubject('2001:db8:1:2:aaaa::1')).to.equal(addressSubject('2001:db8:1:2:bbbb::9'));
      expect(addressSubject('2001:db8:1:2::1')).not.to.equal(addressSubject('2001:db8:1:3::1'));
      expect(addressSubject('192.0.2.1')).to.equal('address:192.0.2.1');
    });

    it("chooses the spec's budget for each caller, and buckets instead of the budget", () => {
      const anon = { kind: 'anonymous' } as const;
      const key = (plan: 'free' | 'basic' | 'premium' | null) =>
        ({ kind: 'key', companyId: 'c1', plan }) as const;
      const session = { kind: 'session', personId: 'p1', companyId: 'c1' } as const;
      expect(chooseBudget(undefined, anon, '192.0.2.1')).to.deep.equal({
        name: 'budget',
        limit: 120,
        subject: 'address:192.0.2.1',
      });
      expect(chooseBudget(undefined, session, '192.0.2.1')).to.include({ limit: 300, subject: 'person:p1' });
      // demo visitors all act as one person: counted per address
      expect(chooseBudget(undefined, { ...session, demo: true }, '192.0.2.1')).to.include({
        limit: 300,
        subject: 'demo-address:192.0.2.1',
      });
      expect(chooseBudget(undefined, key('free'), 'x').limit).to.equal(30);
      expect(chooseBudget(undefined, key('basic'), 'x').limit).to.equal(120);
      expect(chooseBudget(undefined, key('premium'), 'x')).to.include({ limit: 600, subject: 'company:c1' });
      expect(chooseBudget(undefined, key(null), 'x').limit).to.equal(30);
      const login = { bucket: 'signIn', access: { public: true } } as Parameters<typeof chooseBudget>[0];
      expect(chooseBudget(login, anon, '192.0.2.1')).to.deep.equal({
        name: 'bucket:signIn',
        limit: 10,
        subject: 'address:192.0.2.1',
      });
      const plan = { bucket: 'plan', access: { roles: ['admin'] } } as unknown as Parameters<
        typeof chooseBudget
      >[0];
      expect(chooseBudget(plan, session, 'x')).to.deep.equal({
        name: 'bucket:plan',
        limit: 10,
        subject: 'company:c1',
      });
    });
  });

  describe('headers on every answer', () => {
    it('2xx, 4xx (unknown route, 401, 400, 405) and 5xx answers all carry X-RateLimit-*', async () => {
      const ip = randomClientAddress();
      const answers = [
        await call('GET', '/health', { ip }),
        await call('GET', '/no-such-route', { ip }),
        await call('GET', '/subscriptions/me', { ip }),
        await call('GET', '/subscriptions/me', { ip, token: 'not-a-token' }),
        await call('POST', '/_test/echo', {
          ip,
          raw: '{"name":',
          headers: { 'content-type': 'application/json' },
        }),
        await call('DELETE', '/health', { ip }),
        await call('GET', '/_test/boom', { ip }),
      ];
      expect(answers.map((a) => a.status)).to.deep.equal([200, 404, 401, 401, 400, 405, 500]);
      let previous = 120;
      for (const res of answers) {
        // all of them without a valid sign-in: one counter for the address, 120 a minute
        const { remaining } = expectHeaders(res, 120);
        expect(remaining).to.equal(previous - 1);
        previous = remaining;
      }
    });

    it('a signed-in person is counted separately, at 300 a minute', async () => {
      const { adminToken, employeeToken } = await createTeam();
      const ip = randomClientAddress();
      const a1 = await call('GET', '/subscriptions/me', { ip, token: adminToken });
      const a2 = await call('GET', '/no-such-route', { ip, token: adminToken });
      const e1 = await call('GET', '/subscriptions/me', { ip, token: employeeToken });
      const anon = await call('GET', '/health', { ip });
      expect(expectHeaders(a1, 300).remaining).to.equal(299);
      expect(expectHeaders(a2, 300).remaining).to.equal(298);
      expect(expectHeaders(e1, 300).remaining).to.equal(299);
      expect(expectHeaders(anon, 120).remaining).to.equal(119);
    });

    it('a forged session token or API key is counted per address, never for the company it names', async () => {
      const team = await createTeam();
      const key = await createApiKey(team.admin, ['files:read']);
      const forgedKey = key.slice(0, -4) + 'AAAA';
      const ip = randomClientAddress();
      const r1 = await call('GET', '/subscriptions/me', { ip, token: forgedKey });
      const r2 = await call('GET', '/subscriptions/me', { ip, token: team.adminToken.slice(0, -3) + 'abc' });
      expectErrorBody(r1, 401);
      expectErrorBody(r2, 401);
      expect(expectHeaders(r1, 120).remaining).to.equal(119);
      expect(expectHeaders(r2, 120).remaining).to.equal(118);
      const real = await call('GET', '/subscriptions/me', { ip, token: key });
      expect(real.status).to.equal(200);
      expect(expectHeaders(real, 30).remaining).to.equal(29);
    });
  });

  it('an API key is read once per request, shared by the budget and authentication', async () => {
    const team = await createTeam({ plan: 'basic' });
    const key = await createApiKey(team.admin, ['files:read']);
    const { knex } = testEnv().deps; // the API's connection (the application role)
    let reads = 0;
    const listener = (q: { sql: string }) => {
      if (/from "api_keys" as "k"/.test(q.sql)) reads += 1;
    };
    knex.on('query', listener);
    try {
      expect((await call('GET', '/subscriptions/me', { token: key })).status).to.equal(200);
    } finally {
      knex.removeListener('query', listener);
    }
    expect(reads).to.equal(1);
  });

  it('when the counter store is unreachable the request is not counted (fail open): liveness still answers', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    // not createKnex: that would also rebind objection's default knex for the rest of the run
    const quiet = { warn() {}, error() {}, debug() {}, deprecate() {} };
    const knex = knexFactory({
      client: 'pg',
      connection: `postgres://nobody:nothing@127.0.0.1:${port}/nowhere`,
      pool: { min: 0, max: 1 },
      log: quiet,
    });
    const app = createApp({ ...testEnv().deps, knex });
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('120');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('120');
      expect(res.headers.get('x-ratelimit-reset')).to.equal('60');
      // an API key cannot be looked up either: counted per address, and the failure still has the headers
      const key = `svc_live_${'a'.repeat(12)}_${'b'.repeat(40)}`;
      const keyed = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/subscriptions/me`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      expect(keyed.status).to.equal(500);
      expect(keyed.headers.get('x-ratelimit-limit')).to.equal('120');
      await keyed.arrayBuffer();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await knex.destroy();
    }
  });

  describe('exhaustion', () => {
    it('without sign-in: 120 a minute per address, then 429 with Retry-After equal to X-RateLimit-Reset', async () => {
      const ip = randomClientAddress();
      const other = randomClientAddress();
      const answers = await Promise.all(Array.from({ length: 125 }, () => call('GET', '/health', { ip })));
      expect(statuses(answers)).to.deep.equal({ 200: 120, 429: 5 });
      const refused = answers.find((a) => a.status === 429)!;
      const body = expectErrorBody(refused, 429);
      expect(body.message).to.equal('request budget of 120 per minute used');
      expect(refused.headers.get('retry-after')).to.equal(refused.headers.get('x-ratelimit-reset'));
      expect(limits(refused)).to.include({ limit: 120, remaining: 0 });
      // another address is not affected
      expect((await call('GET', '/health', { ip: other })).status).to.equal(200);
    });

    it('API keys spend their company budget (Free 30), shared by all its keys; other companies are not affected', async () => {
      const team = await createTeam({ plan: 'free' });
      const k1 = await createApiKey(team.admin, ['files:read']);
      const k2 = await createApiKey(team.employee, ['files:read']);
      const other = await createTeam({ plan: 'free' });
      const otherKey = await createApiKey(other.admin, ['files:read']);
      const answers = await Promise.all(
        Array.from({ length: 36 }, (_, i) => call('GET', '/subscriptions/me', { token: i % 2 ? k1 : k2 })),
      );
      expect(statuses(answers)).to.deep.equal({ 200: 30, 429: 6 });
      for (const a of answers) expectHeaders(a, 30);
      // the people's own dashboard sessions are counted separately
      expect((await call('GET', '/subscriptions/me', { token: team.adminToken })).status).to.equal(200);
      const otherRes = await call('GET', '/subscriptions/me', { token: otherKey });
      expect(otherRes.status).to.equal(200);
      expect(limits(otherRes).remaining).to.equal(29);
    });

    it("the budget follows the company's plan (Basic 120, Premium 600)", async () => {
      for (const [plan, limit] of [
        ['basic', 120],
        ['premium', 600],
      ] as const) {
        const company = await createCompany({ plan });
        const admin = await createPerson(company);
        const key = await createApiKey(admin, ['files:read']);
        expectHeaders(await call('GET', '/subscriptions/me', { token: key }), limit);
      }
    });
  });

  describe('separate buckets', () => {
    it("each limited route names the spec's bucket, and the bucket has the spec's limit", () => {
      // the spec's Limits part: action → per-minute limit
      const expected: Array<[string, string, BucketName, number]> = [
        ['post', '/auth/login', 'signIn', 10],
        ['post', '/auth/register', 'register', 10],
        ['post', '/auth/reset-password', 'register', 10],
        ['post', '/auth/accept-invite', 'register', 10],
        ['post', '/auth/forgot-password', 'forgotPassword', 5],
        ['post', '/auth/resend-activation', 'forgotPassword', 5],
        ['post', '/demo/sessions', 'demo', 20],
        ['patch', '/subscriptions/me', 'plan', 10],
      ];
      for (const [method, path, bucket, perMinute] of expected) {
        const spec = routes.find((r) => r.method === method && r.path === path);
        expect(spec, `${method} ${path}`).to.not.equal(undefined);
        expect(spec!.bucket, `${method} ${path}`).to.equal(bucket);
        expect(BUCKETS[bucket], bucket).to.equal(perMinute);
      }
    });

    it('forgot password: the 6th call a minute from one address gets 429', async () => {
      const ip = randomClientAddress();
      const answers = [];
      for (let i = 0; i < 6; i++) {
        answers.push(
          await call('POST', '/auth/forgot-password', { ip, json: { email: 'nobody@example.test' } }),
        );
      }
      expect(answers.map((a) => a.status)).to.deep.equal([...Array(5).fill(202), 429]);
      answers.forEach((a) => expectHeaders(a, 5));
      expect(expectErrorBody(answers[5], 429).message).to.equal(
        'too many requests: the forgot-password and resend-activation limit is 5 per minute',
      );
    });

    it('sign-in: 10 a minute per address, not drawn from the main budget', async () => {
      const ip = randomClientAddress();
      // unknown addresses of this test only (failed sign-ins are also counted per account)
      const nobody = `nobody-${ip}@example.test`;
      const before = limits(await call('GET', '/health', { ip }));
      const attempts = [];
      for (let i = 0; i < 12; i++) {
        attempts.push(
          await call('POST', '/auth/login', {
            ip,
            json: { email: `${i}-${nobody}`, password: 'wrong' },
          }),
        );
      }
      expect(attempts.map((a) => a.status)).to.deep.equal([...Array(10).fill(401), 429, 429]);
      attempts.forEach((a) => expectHeaders(a, 10));
      expect(limits(attempts[9]).remaining).to.equal(0);
      expect(expectErrorBody(attempts[10], 429).message).to.equal(
        'too many requests: the sign-in limit is 10 per minute',
      );
      expect(attempts[10].headers.get('retry-after')).to.equal(attempts[10].headers.get('x-ratelimit-reset'));
      const after = limits(await call('GET', '/health', { ip }));
      expect(after.remaining).to.equal(before.remaining - 1);
      // another address may still sign in
      const elsewhere = await call('POST', '/auth/login', {
        json: { email: nobody, password: 'x' },
      });
      expect(elsewhere.status).to.equal(401);
    });

    it('choosing a plan: 10 a minute per company when signed in', async () => {
      const team = await createTeam({ plan: null });
      const secondAdmin = await createPerson(team.company, { role: 'admin' });
      const other = await createTeam({ plan: null });
      const api = apiClient({ token: team.adminToken });
      const answers = [];
      for (let i = 0; i < 10; i++) {
        answers.push(await api.patch('/subscriptions/me', { body: { plan: i % 2 ? 'basic' : 'free' } }));
      }
      expect(answers.map((a) => a.status)).to.deep.equal(Array(10).fill(200));
      answers.forEach((a) => expectHeaders(a, 10));
      const secondToken = await tokenFor(secondAdmin);
      const refused = await api
        .with({ token: secondToken })
        .patch('/subscriptions/me', { body: { plan: 'premium' } });
      expectErrorBody(refused, 429);
      // the main budget of the person is untouched, and another company is not affected
      const read = await api.get('/subscriptions/me');
      expect(expectHeaders(read, 300).remaining).to.equal(299);
      expect(read.body.plan).to.equal('basic'); // the 10th choice; the refused one changed nothing
      const otherRes = await apiClient({ token: other.adminToken }).patch('/subscriptions/me', {
        body: { plan: 'basic' },
      });
      expect(otherRes.status).to.equal(200);
    });
    it("a caller the route refuses spends its own budget, not the company's plan bucket", async () => {
      const team = await createTeam({ plan: null });
      const employee = apiClient({ token: team.employeeToken });
      for (let i = 0; i < 12; i++) {
        const refused = await employee.patch('/subscriptions/me', { body: { plan: 'premium' } });
        expectErrorBody(refused, 403);
        // counted against the employee's own budget (300 a minute), the company's bucket untouched
        expect(expectHeaders(refused, 300).remaining).to.equal(299 - i);
      }
      const chosen = await apiClient({ token: team.adminToken }).patch('/subscriptions/me', {
        body: { plan: 'basic' },
      });
      expect(chosen.status).to.equal(200);
      expect(expectHeaders(chosen, 10).remaining).to.equal(9);
      // a request refused before authentication (a body that is not JSON) is counted too: the caller's budget
      const malformed = await call('PATCH', '/subscriptions/me', {
        token: team.employeeToken,
        headers: { 'content-type': 'application/json' },
        raw: '{',
      });
      expectErrorBody(malformed, 400);
      expect(expectHeaders(malformed, 300).remaining).to.equal(287);
    });
  });

  describe('client address', () => {
    it('ignores X-Forwarded-For by default (TRUST_PROXY_HOPS=0): it cannot be spoofed', async () => {
      const server = await startApp({ config: { trustProxyHops: 0 } });
      const api = apiClient({ baseUrl: server.baseUrl });
      const first = await api.with({ ip: randomClientAddress() }).get('/health');
      const second = await api.with({ ip: randomClientAddress() }).get('/health');
      // both counted for the socket address 127.0.0.1, whatever the header says
      expect(limits(second).remaining).to.equal(limits(first).remaining - 1);
    });

    it('honours X-Forwarded-For through the configured trusted hops', async () => {
      const server = await startApp({ config: { trustProxyHops: 1 } });
      const api = apiClient({ baseUrl: server.baseUrl });
      const first = await api.with({ ip: randomClientAddress() }).get('/health');
      const second = await api.with({ ip: randomClientAddress() }).get('/health');
      expect(limits(first).remaining).to.equal(119);
      expect(limits(second).remaining).to.equal(119);
    });
  });

  describe('concurrency across two API processes sharing the database', function () {
    this.timeout(60_000);

    it('N parallel requests against a budget of B give exactly B successes and N-B 429s', async () => {
      // one trusted hop, so the anonymous part below can use an address of its own
      const [one, two] = await Promise.all([
        startApiProcess({ TRUST_PROXY_HOPS: '1' }),
        startApiProcess({ TRUST_PROXY_HOPS: '1' }),
      ]);
      try {
        const team = await createTeam({ plan: 'free' });
        const key = await createApiKey(team.admin, ['files:read']);
        const N = 80;
        const B = 30;
        const answers = await Promise.all(
          Array.from({ length: N }, (_, i) =>
            call('GET', '/subscriptions/me', { token: key, baseUrl: i % 2 ? one.baseUrl : two.baseUrl }),
          ),
        );
        expect(statuses(answers)).to.deep.equal({ 200: B, 429: N - B });
        const remaining = answers.filter((a) => a.status === 200).map((a) => limits(a).remaining);
        // every success saw a distinct count: the counter is exact, not eventually consistent
        expect(new Set(remaining).size).to.equal(B);
        expect(Math.min(...remaining)).to.equal(0);
        for (const a of answers.filter((x) => x.status === 429)) {
          expectErrorBody(a, 429);
          expect(a.headers.get('retry-after')).to.equal(a.headers.get('x-ratelimit-reset'));
        }

        // and without sign-in, per address: 120
        const ip = randomClientAddress();
        const anon = await Promise.all(
          Array.from({ length: 150 }, (_, i) =>
            call('GET', '/plans', { ip, baseUrl: i % 2 ? one.baseUrl : two.baseUrl }),
          ),
        );
        expect(statuses(anon)).to.deep.equal({ 200: 120, 429: 30 });
      } finally {
        await Promise.all([one.stop(), two.stop()]);
      }
    });
  });
});
