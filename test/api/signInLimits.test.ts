import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { chooseBudget } from '../../api/middlewares/rateLimit';
import { routes } from '../../api/routes';
import { createApiKey, createCompany, createPerson, createTeam } from '../helpers/factories';
import { call, expectErrorBody, randomClientAddress, type HttpResponse } from '../helpers/http';
import { startApp } from '../helpers/servers';

function rateHeaders(res: HttpResponse) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
    retryAfter: res.headers.get('retry-after'),
  };
}

const unknownAddress = () => `nobody-${randomUUID().slice(0, 12)}@example.test`;

describe('sign-in limits (issue 10, item 3)', () => {
  describe('public buckets count per client address whatever token is attached', () => {
    it('every bucket of a public route is counted per address for every kind of caller', () => {
      const callers = [
        { kind: 'anonymous' },
        { kind: 'session', personId: 'p1', companyId: 'c1' },
        { kind: 'key', companyId: 'c1', plan: 'free' },
      ] as const;
      const publicBucketRoutes = routes.filter((r) => r.bucket && r.access.public);
      expect(publicBucketRoutes.map((r) => `${r.method} ${r.path}`)).to.include.members([
        'post /auth/login',
        'post /auth/register',
        'post /auth/reset-password',
        'post /auth/accept-invite',
        'post /auth/forgot-password',
        'post /auth/resend-activation',
        'post /auth/activate',
        'post /auth/oauth/exchange',
        'post /demo/sessions',
      ]);
      for (const spec of publicBucketRoutes) {
        for (const caller of callers) {
          expect(chooseBudget(spec, caller, '192.0.2.7'), `${spec.path} as ${caller.kind}`).to.deep.equal({
            name: `bucket:${spec.bucket}`,
            limit: chooseBudget(spec, { kind: 'anonymous' }, '192.0.2.7').limit,
            subject: 'address:192.0.2.7',
          });
        }
      }
      // a signed-in route's bucket stays per company (the spec: "per company when signed in")
      const plan = routes.find((r) => r.path === '/subscriptions/me' && r.method === 'patch')!;
      expect(chooseBudget(plan, callers[1], '192.0.2.7').subject).to.equal('company:c1');
    });

    it('a valid bearer token on POST /auth/login does not buy more attempts from one address', async () => {
      const teams = await Promise.all([createTeam(), createTeam()]);
      const key = await createApiKey(teams[1].admin, ['files:read']);
      const ip = randomClientAddress();
      for (let i = 0; i < 10; i++) {
        const res = await call('POST', '/auth/login', {
          ip,
          json: { email: unknownAddress(), password: 'wrong guess' },
        });
        expectErrorBody(res, 401);
      }
      for (const token of [teams[0].adminToken, teams[1].employeeToken, key]) {
        const res = await call('POST', '/auth/login', {
          ip,
          token,
          json: { email: unknownAddress(), password: 'wrong guess' },
        });
        expect(expectErrorBody(res, 429).message).to.equal(
          'too many requests: the sign-in limit is 10 per minute',
        );
        expect(rateHeaders(res)).to.include({ limit: '10', remaining: '0' });
      }
    });

    it('forgot password and register buckets too: a token does not move the count off the address', async () => {
      const team = await createTeam();
      const ip = randomClientAddress();
      for (let i = 0; i < 5; i++) {
        const res = await call('POST', '/auth/forgot-password', { ip, json: { email: unknownAddress() } });
        expect(res.status).to.equal(202);
      }
      const withToken = await call('POST', '/auth/forgot-password', {
        ip,
        token: team.adminToken,
        json: { email: unknownAddress() },
      });
      expectErrorBody(withToken, 429);

      const ip2 = randomClientAddress();
      for (let i = 0; i < 10; i++) {
        const res = await call('POST', '/auth/reset-password', {
          ip: ip2,
          json: { token: 'not-a-token', password: 'a new password' },
        });
        expectErrorBody(res, 401);
      }
      const resetWithToken = await call('POST', '/auth/reset-password', {
        ip: ip2,
        token: team.employeeToken,
        json: { token: 'not-a-token', password: 'a new password' },
      });
      expectErrorBody(resetWithToken, 429);
    });
  });

  describe('failed sign-ins per account', () => {
    it('N failures from N addresses lock the account for the window, even for the right password', async () => {
      const server = await startApp({
        config: { signIn: { failuresPerAccount: 3, failureWindowSeconds: 120 } },
      });
      const company = await createCompany();
      const person = await createPerson(company);
      const other = await createPerson(company);
      const at = (email: string, password: string) =>
        call('POST', '/auth/login', { baseUrl: server.baseUrl, json: { email, password } });

      // successful sign-ins do not count
      expect((await at(person.email, person.password)).status).to.equal(200);
      for (let i = 0; i < 3; i++) {
        // each from a fresh address, so the per-address bucket never trips
        expectErrorBody(await at(i === 1 ? person.email.toUpperCase() : person.email, 'wrong guess'), 401);
        if (i === 1) expect((await at(person.email, person.password)).status).to.equal(200);
      }
      const locked = await at(person.email, person.password);
      const body = expectErrorBody(locked, 429);
      expect(body.message).to.equal('too many failed sign-ins for this account; try again later');
      const h = rateHeaders(locked);
      expect(h).to.include({ limit: '3', remaining: '0' });
      expect(Number(h.retryAfter)).to.be.within(1, 120);
      expect(h.reset).to.equal(h.retryAfter);
      // another account is not affected
      expect((await at(other.email, other.password)).status).to.equal(200);
    });

    it('an unknown address is counted and answered exactly like a known one (no existence leak)', async () => {
      const server = await startApp({
        config: { signIn: { failuresPerAccount: 2, failureWindowSeconds: 60 } },
      });
      const company = await createCompany();
      const person = await createPerson(company);
      const unknown = unknownAddress();
      const answers: Record<string, Array<{ status: number; message: unknown; limit: string | null }>> = {};
      for (const email of [person.email, unknown]) {
        answers[email] = [];
        for (let i = 0; i < 4; i++) {
          const res = await call('POST', '/auth/login', {
            baseUrl: server.baseUrl,
            json: { email, password: 'wrong guess' },
          });
          answers[email].push({
            status: res.status,
            message: (res.body as { message: unknown }).message,
            limit: res.headers.get('x-ratelimit-limit'),
          });
        }
      }
      expect(answers[person.email].map((a) => a.status)).to.deep.equal([401, 401, 429, 429]);
      expect(answers[unknown]).to.deep.equal(answers[person.email]);
    });

    it('parallel guesses cannot overrun the limit: exactly N are verified', async () => {
      const server = await startApp({
        config: { signIn: { failuresPerAccount: 3, failureWindowSeconds: 60 } },
      });
      const person = await createPerson(await createCompany());
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          call('POST', '/auth/login', {
            baseUrl: server.baseUrl,
            json: { email: person.email, password: 'wrong guess' },
          }),
        ),
      );
      const counts: Record<number, number> = {};
      for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
      expect(counts).to.deep.equal({ 401: 3, 429: 7 });
    });
  });
});
