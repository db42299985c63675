import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { MESSAGES } from '../../domain/identity/google';
import type { Config } from '../../common/config';
import { createCompany, createPerson, type TestPerson } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody, randomClientAddress, readResponse, type HttpResponse } from '../helpers/http';
import { startOidcProvider, walkProvider, type LocalOidcProvider } from '../helpers/oidc';

/**
 * The whole Google flow against a real OpenID Connect provider (oidc-provider) on loopback. The API under
 * test runs with its own configuration (issuer, client, public address); tokens it issues are checked on
 * the run's main server (same database and secret), which has the test-only /_test/whoami route.
 */
describe('Google sign-in (OpenID Connect against a local provider)', function () {
  this.timeout(30_000);

  let provider: LocalOidcProvider;
  let server: http.Server;
  let config: Config;
  let apiUrl: string;
  let callbackUrl: string;
  let subjects = 0;

  before(async () => {
    const env = testEnv();
    config = structuredClone(env.config);
    server = http.createServer(createApp({ ...env.deps, config }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    callbackUrl = `${apiUrl}/auth/oauth/google/callback`;
    provider = await startOidcProvider([callbackUrl]);
    // the configuration is read on each request: set before the first one
    config.publicBaseUrl = apiUrl;
    config.google = {
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
    };
    config.oauth = { redirectAfter: '' };
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await provider.stop();
  });

  async function api(method: string, path: string, json?: unknown): Promise<HttpResponse> {
    const res = await fetch(apiUrl + path, {
      method,
      headers: {
        // each call from its own address (the test config trusts one proxy hop): the sign-in bucket allows
        // 10 a minute per address, more than this file's flows from 127.0.0.1 would otherwise get
        'x-forwarded-for': randomClientAddress(),
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
      redirect: 'manual',
    });
    return readResponse(res);
  }

  /** A provider account (subject) for the address. */
  function googleAccount(email: string, emailVerified = true): string {
    subjects += 1;
    const subject = `google-${subjects}-${Date.now()}`;
    provider.accounts.set(subject, { email, email_verified: emailVerified, name: 'Someone' });
    return subject;
  }

  async function begin(): Promise<{ url: string; state: string; expiresIn: number }> {
    const res = await api('POST', '/auth/oauth/google/url');
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  /** POST url → the provider's sign-in → the URL the provider sends the browser back to (not yet visited). */
  async function toCallback(subject: string, options: { abort?: boolean } = {}) {
    const started = await begin();
    const returned = await walkProvider(started.url, subject, callbackUrl, options);
    return { ...started, returned };
  }

  async function callback(url: URL): Promise<HttpResponse> {
    return api('GET', url.pathname + url.search);
  }

  /** The whole flow for the account: answers the token pair. */
  async function signInWithGoogle(subject: string) {
    const { state, returned } = await toCallback(subject);
    const cb = await callback(returned);
    expect(cb.status, cb.text).to.equal(200);
    const exchange = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state });
    expect(exchange.status, exchange.text).to.equal(200);
    return exchange.body;
  }

  async function personRow(person: TestPerson) {
    return testEnv().knex('people').where({ id: person.id }).first();
  }

  it('walks the whole flow: provider address, sign-in at the provider, callback, one-time code, token pair; the code works once', async () => {
    const company = await createCompany();
    const person = await createPerson(company, { role: 'employee' });
    const other = await createPerson(await createCompany());
    // the provider's address differs in case: addresses match case-insensitively
    const subject = googleAccount(person.email.toUpperCase());

    const started = await begin();
    expect(Object.keys(started).sort()).to.deep.equal(['expiresIn', 'state', 'url']);
    expect(started.expiresIn).to.equal(600);
    const url = new URL(started.url);
    expect(url.origin).to.equal(provider.issuer);
    expect(url.searchParams.get('redirect_uri')).to.equal(callbackUrl);
    expect(url.searchParams.get('state')).to.equal(started.state);
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(url.searchParams.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).to.be.a('string').with.length.above(20);
    expect(url.searchParams.get('scope')).to.include('openid').and.include('email');
    // the state and the PKCE verifier are not stored in clear
    const pending = await testEnv().knex('oauthStates').orderBy('createdAt', 'desc').first();
    expect(pending.stateFingerprint).to.not.equal(started.state);
    expect(pending.codeVerifier).to.not.include(started.state);

    const returned = await walkProvider(started.url, subject, callbackUrl);
    expect(returned.searchParams.get('state')).to.equal(started.state);
    const cb = await callback(returned);
    expect(cb.status, cb.text).to.equal(200);
    expect(Object.keys(cb.body).sort()).to.deep.equal(['code', 'expiresIn']);
    expect(cb.body.expiresIn).to.equal(60);
    expect(cb.headers.get('cache-control')).to.equal('no-store');

    const exchange = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state: started.state });
    expect(exchange.status, exchange.text).to.equal(200);
    expect(Object.keys(exchange.body).sort()).to.deep.equal([
      'accessToken',
      'expiresIn',
      'refreshToken',
      'tokenType',
    ]);
    expect(exchange.body).to.include({ tokenType: 'Bearer', expiresIn: 900 });
    const who = await call('GET', '/_test/whoami', { token: exchange.body.accessToken });
    expect(who.status, who.text).to.equal(200);
    expect(who.body).to.include({
      kind: 'session',
      personId: person.id,
      companyId: company.id,
      role: 'employee',
      demo: false,
    });
    // the refresh token works like any other
    const refreshed = await call('POST', '/auth/refresh', {
      json: { refreshToken: exchange.body.refreshToken },
    });
    expect(refreshed.status, refreshed.text).to.equal(200);

    // the subject is recorded at the first sign-in, with an audit record; the session says how it began
    expect((await personRow(person)).googleSubject).to.equal(subject);
    const audit = await testEnv()
      .knex('auditLog')
      .where({ companyId: company.id, action: 'person.google_linked' });
    expect(audit).to.have.length(1);
    const session = await testEnv().knex('sessions').where({ personId: person.id }).first();
    expect(session).to.include({ method: 'google', demo: false });

    // replayed one-time code: refused
    const replay = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state: started.state });
    expect(expectErrorBody(replay, 401).message).to.equal(MESSAGES.badCode);
    // the same provider answer presented again: its state was used
    expect(expectErrorBody(await callback(returned), 400).message).to.equal(MESSAGES.badState);

    // another company's person is not touched
    expect((await personRow(other)).googleSubject).to.equal(null);
    expect(await testEnv().knex('sessions').where({ personId: other.id })).to.have.length(0);
  });

  it('refuses a wrong state at the callback (400) and the real one still works', async () => {
    const person = await createPerson(await createCompany());
    const { state, returned } = await toCallback(googleAccount(person.email));

    const forged = new URL(returned);
    forged.searchParams.set('state', 'forged-state-value-that-was-never-issued');
    expect(expectErrorBody(await callback(forged), 400).message).to.equal(MESSAGES.badState);
    const missing = new URL(returned);
    missing.searchParams.delete('state');
    expect(expectErrorBody(await callback(missing), 400).message).to.equal(MESSAGES.badState);

    const cb = await callback(returned);
    expect(cb.status, cb.text).to.equal(200);
    expect((await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state })).status).to.equal(200);
  });

  it("refuses another sign-in's state with this code: the PKCE verifier does not match (401)", async () => {
    const person = await createPerson(await createCompany());
    const subject = googleAccount(person.email);
    const first = await toCallback(subject);
    const second = await toCallback(subject);
    const mixed = new URL(second.returned);
    mixed.searchParams.set('state', first.state);
    expect(expectErrorBody(await callback(mixed), 401).message).to.equal(MESSAGES.notVerified);
    expect(await testEnv().knex('sessions').where({ personId: person.id })).to.have.length(0);
  });

  it('refuses an ID token whose nonce is not the one sent (401)', async () => {
    const person = await createPerson(await createCompany());
    const { returned } = await toCallback(googleAccount(person.email));
    // the pending authorization now expects another nonce than the one the provider put in the ID token
    await testEnv().knex('oauthStates').whereNull('usedAt').update({ nonce: 'a-different-nonce' });
    expect(expectErrorBody(await callback(returned), 401).message).to.equal(MESSAGES.notVerified);
    expect((await personRow(person)).googleSubject).to.equal(null);
  });

  it('refuses an expired pending authorization (400)', async () => {
    const person = await createPerson(await createCompany());
    const { returned } = await toCallback(googleAccount(person.email));
    await testEnv()
      .knex('oauthStates')
      .whereNull('usedAt')
      .update({ expiresAt: new Date(Date.now() - 1000) });
    expect(expectErrorBody(await callback(returned), 400).message).to.equal(MESSAGES.badState);
  });

  it('a person who cancels at the provider is not signed in (401)', async () => {
    const person = await createPerson(await createCompany());
    const { returned } = await toCallback(googleAccount(person.email), { abort: true });
    expect(returned.searchParams.get('error')).to.equal('access_denied');
    const res = await callback(returned);
    expect(expectErrorBody(res, 401).message).to.equal(
      'the identity provider did not sign the person in (access_denied)',
    );
  });

  it('the one-time code is bound to the state of the browser that began, and expires', async () => {
    const person = await createPerson(await createCompany());
    const subject = googleAccount(person.email);
    const { state, returned } = await toCallback(subject);
    const cb = await callback(returned);
    const wrong = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state: `${state}x` });
    expect(expectErrorBody(wrong, 401).message).to.equal(MESSAGES.badCode);
    // a refused attempt spends the code
    const after = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state });
    expectErrorBody(after, 401);

    const next = await toCallback(subject);
    const cb2 = await callback(next.returned);
    await testEnv()
      .knex('oneTimeTokens')
      .where({ personId: person.id, purpose: 'oauth_exchange' })
      .whereNull('usedAt')
      .update({ expiresAt: new Date(Date.now() - 1000) });
    const expired = await api('POST', '/auth/oauth/exchange', { code: cb2.body.code, state: next.state });
    expect(expectErrorBody(expired, 401).message).to.equal(MESSAGES.badCode);
    expectErrorBody(await api('POST', '/auth/oauth/exchange', { code: 'oc_unknown', state }), 401);
    expect(expectErrorBody(await api('POST', '/auth/oauth/exchange', { code: 'x' }), 400).message).to.equal(
      'body.state is required',
    );
    expect(await testEnv().knex('sessions').where({ personId: person.id })).to.have.length(0);
  });

  it('later sign-ins match the recorded subject, even after the address changed at Google', async () => {
    const company = await createCompany();
    const person = await createPerson(company);
    const subject = googleAccount(person.email);
    await signInWithGoogle(subject);
    provider.accounts.set(subject, { email: `renamed-${Date.now()}@elsewhere.test`, email_verified: true });
    const pair = await signInWithGoogle(subject);
    const who = await call('GET', '/_test/whoami', { token: pair.accessToken });
    expect(who.body).to.include({ personId: person.id, companyId: company.id });
  });

  it('an address already linked to another Google account is not taken over (401)', async () => {
    const person = await createPerson(await createCompany());
    await signInWithGoogle(googleAccount(person.email));
    const intruder = googleAccount(person.email);
    const { returned } = await toCallback(intruder);
    expect(expectErrorBody(await callback(returned), 401).message).to.equal(MESSAGES.noAccount);
  });

  it('refuses an unknown address and an unverified one (401); nobody is created', async () => {
    const unknown = `nobody-${Date.now()}@example.test`;
    const a = await toCallback(googleAccount(unknown));
    expect(expectErrorBody(await callback(a.returned), 401).message).to.equal(MESSAGES.noAccount);
    expect(await testEnv().knex('people').whereRaw('lower(email) = lower(?)', [unknown])).to.have.length(0);

    const person = await createPerson(await createCompany());
    const b = await toCallback(googleAccount(person.email, false));
    expect(expectErrorBody(await callback(b.returned), 401).message).to.equal(MESSAGES.emailNotVerified);
    expect((await personRow(person)).googleSubject).to.equal(null);
  });

  it('applies the same 403 rules as sign-in with a password, at the callback and again at the exchange', async () => {
    const company = await createCompany();
    const notActivated = await createPerson(company, { status: 'not_activated' });
    const disabled = await createPerson(company, { status: 'disabled' });
    const suspended = await createPerson(await createCompany({ status: 'suspended' }));
    for (const [person, message] of [
      [notActivated, MESSAGES.notActivated],
      [disabled, MESSAGES.disabled],
      [suspended, MESSAGES.companyInactive],
    ] as const) {
      const { returned } = await toCallback(googleAccount(person.email));
      expect(expectErrorBody(await callback(returned), 403).message).to.equal(message);
    }
    // a verified Google sign-in does not activate an account
    expect((await personRow(notActivated)).status).to.equal('not_activated');

    // disabled between the callback and the exchange
    const person = await createPerson(company);
    const { state, returned } = await toCallback(googleAccount(person.email));
    const cb = await callback(returned);
    await testEnv().knex('people').where({ id: person.id }).update({ status: 'disabled' });
    const res = await api('POST', '/auth/oauth/exchange', { code: cb.body.code, state });
    expect(expectErrorBody(res, 403).message).to.equal(MESSAGES.disabled);
  });

  it('with OAUTH_REDIRECT_AFTER, the callback sends the browser to the front-end with ?code= or ?error=', async () => {
    const person = await createPerson(await createCompany());
    const subject = googleAccount(person.email);
    config.oauth = { redirectAfter: 'https://app.example.test/signed-in?from=google' };
    try {
      const { state, returned } = await toCallback(subject);
      const ok = await callback(returned);
      expect(ok.status, ok.text).to.equal(302);
      const location = new URL(ok.headers.get('location')!);
      expect(location.origin + location.pathname).to.equal('https://app.example.test/signed-in');
      expect(location.searchParams.get('from')).to.equal('google');
      const code = location.searchParams.get('code')!;
      expect((await api('POST', '/auth/oauth/exchange', { code, state })).status).to.equal(200);

      const refused = await callback(returned); // its state was used
      expect(refused.status).to.equal(302);
      const back = new URL(refused.headers.get('location')!);
      expect(back.searchParams.get('error')).to.equal('400');
      expect(back.searchParams.get('message')).to.equal(MESSAGES.badState);
      expect(back.searchParams.get('correlationId')).to.equal(refused.headers.get('x-request-id'));
      expect(back.searchParams.has('code')).to.equal(false);
    } finally {
      config.oauth = { redirectAfter: '' };
    }
  });

  it('answers 404 when Google sign-in is not configured, and 503 when the provider cannot be reached', async () => {
    const saved = config.google;
    try {
      config.google = { ...saved, clientId: '' };
      expect(expectErrorBody(await api('POST', '/auth/oauth/google/url'), 404).message).to.equal(
        MESSAGES.notConfigured,
      );
      expectErrorBody(await api('GET', '/auth/oauth/google/callback?code=a&state=b'), 404);
      // a port nobody listens on
      const probe = http.createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const closedPort = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      config.google = { issuer: `http://127.0.0.1:${closedPort}`, clientId: 'x', clientSecret: 'y' };
      expect(expectErrorBody(await api('POST', '/auth/oauth/google/url'), 503).message).to.equal(
        MESSAGES.unreachable,
      );

      // a provider that stops answering between the sign-in and the callback
      const fleeting = await startOidcProvider([callbackUrl]);
      const person = await createPerson(await createCompany());
      const subject = `fleeting-${Date.now()}`;
      fleeting.accounts.set(subject, { email: person.email, email_verified: true });
      config.google = {
        issuer: fleeting.issuer,
        clientId: fleeting.clientId,
        clientSecret: fleeting.clientSecret,
      };
      const { returned } = await toCallback(subject);
      await fleeting.stop();
      expect(expectErrorBody(await callback(returned), 503).message).to.equal(MESSAGES.unreachable);
    } finally {
      config.google = saved;
    }
  });

  it('validates the exchange body', async () => {
    const res = await api('POST', '/auth/oauth/exchange', { code: 'a', state: 'b', extra: 1 });
    expect(expectErrorBody(res, 400).message).to.equal('body: unknown field "extra"');
  });
});
