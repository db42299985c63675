import { expect } from 'chai';
import { decodeJwt, SignJWT } from 'jose';
import { sessionKeys } from '../../domain/identity/sessions';
import { UNAUTHENTICATED } from '../../api/middlewares/authenticate';
import { createCompany, createPerson, createTeam, signIn } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';

describe('sessions: sign-in, refresh, logout', () => {
  describe('POST /auth/login', () => {
    it('answers the token pair for the right password', async () => {
      const company = await createCompany();
      const person = await createPerson(company);
      const res = await call('POST', '/auth/login', {
        json: { email: person.email, password: person.password },
      });
      expect(res.status, res.text).to.equal(200);
      expect(Object.keys(res.body).sort()).to.deep.equal([
        'accessToken',
        'expiresIn',
        'refreshToken',
        'tokenType',
      ]);
      expect(res.body.tokenType).to.equal('Bearer');
      expect(res.body.expiresIn).to.equal(900);
      const who = await call('GET', '/_test/whoami', { token: res.body.accessToken });
      expect(who.status).to.equal(200);
      expect(who.body).to.include({
        kind: 'session',
        personId: person.id,
        companyId: company.id,
        role: 'admin',
      });
    });

    it('matches the address case-insensitively', async () => {
      const person = await createPerson(await createCompany());
      const res = await call('POST', '/auth/login', {
        json: { email: person.email.toUpperCase(), password: person.password },
      });
      expect(res.status).to.equal(200);
    });

    it('rule 2: a wrong password and an unknown address get the same 401', async () => {
      const person = await createPerson(await createCompany());
      const wrong = await call('POST', '/auth/login', {
        json: { email: person.email, password: 'not the password' },
      });
      const unknown = await call('POST', '/auth/login', {
        json: { email: 'nobody@example.test', password: 'whatever' },
      });
      expect(expectErrorBody(wrong, 401).message).to.equal('invalid email or password');
      expect(expectErrorBody(unknown, 401).message).to.equal('invalid email or password');
    });

    it('rule 3: 403 when the password is right but the account is not activated, disabled, or its company is not active', async () => {
      const company = await createCompany();
      const notActivated = await createPerson(company, { status: 'not_activated' });
      const disabled = await createPerson(company, { status: 'disabled' });
      const suspended = await createPerson(await createCompany({ status: 'suspended' }));
      for (const [person, message] of [
        [notActivated, 'the account is not activated'],
        [disabled, 'the account is disabled'],
        [suspended, 'the company is not active'],
      ] as const) {
        const res = await call('POST', '/auth/login', {
          json: { email: person.email, password: person.password },
        });
        expect(expectErrorBody(res, 403).message).to.equal(message);
      }
      // and a wrong password for those accounts is still a plain 401
      const res = await call('POST', '/auth/login', {
        json: { email: disabled.email, password: 'wrong one' },
      });
      expectErrorBody(res, 401);
    });

    it('validates the body', async () => {
      const res = await call('POST', '/auth/login', { json: { email: 'a@b.test' } });
      expect(expectErrorBody(res, 400).message).to.equal('body.password is required');
    });
  });

  describe('POST /auth/refresh', () => {
    it('rule 5: exchanges the refresh token for a new pair and rotates it', async () => {
      const person = await createPerson(await createCompany());
      const first = await signIn(person);
      const res = await call('POST', '/auth/refresh', { json: { refreshToken: first.refreshToken } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.refreshToken).to.not.equal(first.refreshToken);
      expect(res.body.expiresIn).to.equal(900);
      expect((await call('GET', '/_test/whoami', { token: res.body.accessToken })).status).to.equal(200);
    });

    it('a reused (already rotated) refresh token ends the whole session', async () => {
      const person = await createPerson(await createCompany());
      const first = await signIn(person);
      const second = (await call('POST', '/auth/refresh', { json: { refreshToken: first.refreshToken } }))
        .body;
      const reuse = await call('POST', '/auth/refresh', { json: { refreshToken: first.refreshToken } });
      expect(expectErrorBody(reuse, 401).message).to.equal(UNAUTHENTICATED);
      // the legitimate newer tokens die with the session
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: second.refreshToken } }),
        401,
      );
      expectErrorBody(await call('GET', '/_test/whoami', { token: second.accessToken }), 401);
      const session = await testEnv().knex('sessions').where({ personId: person.id }).first();
      expect(session.endReason).to.equal('refresh_token_reused');
    });

    it('refuses an unknown or expired refresh token', async () => {
      const person = await createPerson(await createCompany());
      const pair = await signIn(person);
      await testEnv()
        .knex('refreshTokens')
        .update({ expiresAt: new Date(Date.now() - 1000) });
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        401,
      );
      expectErrorBody(await call('POST', '/auth/refresh', { json: { refreshToken: 'rt_nope' } }), 401);
    });

    it('refuses a disabled person (401) and a suspended company (403)', async () => {
      const company = await createCompany();
      const person = await createPerson(company);
      const pair = await signIn(person);
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'suspended' });
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        403,
      );
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'active' });
      await testEnv().knex('people').where({ id: person.id }).update({ status: 'disabled' });
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        401,
      );
    });
  });

  describe('POST /auth/logout', () => {
    it('ends the session at once: its refresh token stops working, its access token runs out on its own clock', async () => {
      const person = await createPerson(await createCompany());
      const pair = await signIn(person);
      const other = await signIn(person); // another device keeps working
      const res = await call('POST', '/auth/logout', {
        token: pair.accessToken,
        json: { refreshToken: pair.refreshToken },
      });
      expect(res.status, res.text).to.equal(204);
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        401,
      );
      // spec (States: Session): "the access token still expires on its own clock" — no revocation list
      expect((await call('GET', '/_test/whoami', { token: pair.accessToken })).status).to.equal(200);
      expect((await call('GET', '/_test/whoami', { token: other.accessToken })).status).to.equal(200);
      // ... and no longer once its 900 s are over
      const keys = sessionKeys(testEnv().config.secretKey);
      const claims = decodeJwt(pair.accessToken);
      const late = await new SignJWT({ cid: claims.cid, sid: claims.sid })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(String(claims.sub))
        .setIssuer(String(claims.iss))
        .setAudience(claims.aud as string)
        .setIssuedAt(Math.floor(Date.now() / 1000) - 901)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 1)
        .sign(keys.access);
      expectErrorBody(await call('GET', '/_test/whoami', { token: late }), 401);
    });

    it('a session ended for a reason other than logout refuses its access tokens from the next request', async () => {
      const person = await createPerson(await createCompany());
      const pair = await signIn(person);
      // a rotated refresh token presented again: a sign of theft, the whole session ends
      const rotated = await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } });
      expect(rotated.status, rotated.text).to.equal(200);
      expectErrorBody(
        await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } }),
        401,
      );
      expectErrorBody(await call('GET', '/_test/whoami', { token: pair.accessToken }), 401);
      expectErrorBody(await call('GET', '/_test/whoami', { token: rotated.body.accessToken }), 401);
    });

    it("ends the refresh token's session too when it is the same person's; another person's is left alone", async () => {
      const company = await createCompany();
      const person = await createPerson(company);
      const a = await signIn(person);
      const b = await signIn(person);
      const stranger = await signIn(await createPerson(company));
      const res = await call('POST', '/auth/logout', {
        token: a.accessToken,
        json: { refreshToken: b.refreshToken },
      });
      expect(res.status, res.text).to.equal(204);
      expectErrorBody(await call('POST', '/auth/refresh', { json: { refreshToken: b.refreshToken } }), 401);

      const c = await signIn(person);
      const other = await call('POST', '/auth/logout', {
        token: c.accessToken,
        json: { refreshToken: stranger.refreshToken },
      });
      expect(other.status, other.text).to.equal(204);
      const refreshed = await call('POST', '/auth/refresh', {
        json: { refreshToken: stranger.refreshToken },
      });
      expect(refreshed.status, refreshed.text).to.equal(200);
    });

    it('needs a session (401 without one)', async () => {
      expectErrorBody(await call('POST', '/auth/logout', { json: { refreshToken: 'x' } }), 401);
    });
  });

  describe('access tokens (rule 7: one 401 message)', () => {
    it('refuses a missing, malformed, expired or foreign-signed token with the same 401', async () => {
      const { admin } = await createTeam();
      const keys = sessionKeys(testEnv().config.secretKey);
      const expired = await new SignJWT({ cid: admin.companyId, sid: 'x' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(admin.id)
        .setIssuer('data-service')
        .setAudience('data-service-api')
        .setIssuedAt(Math.floor(Date.now() / 1000) - 2000)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 1000)
        .sign(keys.access);
      const foreign = await new SignJWT({ cid: admin.companyId, sid: 'x' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(admin.id)
        .setIssuer('data-service')
        .setAudience('data-service-api')
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode('another secret of sufficient length 0123456789'));
      const cases: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer not-a-jwt' },
        { authorization: 'Basic abc' },
        { authorization: `Bearer ${expired}` },
        { authorization: `Bearer ${foreign}` },
      ];
      for (const headers of cases) {
        const res = await call('GET', '/_test/whoami', { headers });
        expect(expectErrorBody(res, 401).message).to.equal(UNAUTHENTICATED);
      }
    });

    it('rule 6: role, person status and company status are read afresh on every request', async () => {
      const { company, admin, adminToken } = await createTeam();
      expect((await call('GET', '/_test/admin-only', { token: adminToken })).status).to.equal(200);
      await testEnv().knex('people').where({ id: admin.id }).update({ role: 'employee' });
      expect(
        expectErrorBody(await call('GET', '/_test/admin-only', { token: adminToken }), 403).message,
      ).to.equal('your role does not allow this');
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'suspended' });
      expect(
        expectErrorBody(await call('GET', '/_test/whoami', { token: adminToken }), 403).message,
      ).to.equal('the company is suspended');
      await testEnv().knex('companies').where({ id: company.id }).update({ status: 'active' });
      await testEnv().knex('people').where({ id: admin.id }).update({ status: 'disabled' });
      expectErrorBody(await call('GET', '/_test/whoami', { token: adminToken }), 401);
      await testEnv().knex('people').where({ id: admin.id }).delete();
      expectErrorBody(await call('GET', '/_test/whoami', { token: adminToken }), 401);
    });

    it('a demo session reads but every write gives 403', async () => {
      const person = await createPerson(await createCompany());
      const demo = await signIn(person, { demo: true });
      expect((await call('GET', '/_test/whoami', { token: demo.accessToken })).body.demo).to.equal(true);
      const write = await call('POST', '/_test/whoami', { token: demo.accessToken });
      expect(expectErrorBody(write, 403).message).to.equal('the demo is read-only');
      const res = await call('POST', '/auth/logout', {
        token: demo.accessToken,
        json: { refreshToken: demo.refreshToken },
      });
      expect(res.status).to.equal(204);
    });
  });
});
