import { execFile } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createApp } from '../../api/app';
import { createMailer } from '../../common/mailer';
import { createCompany, createPerson, signIn } from '../helpers/factories';
import { ROOT, testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { mailsTo, tokenFromMail } from '../helpers/mailbox';

const PASSWORD = 'a long enough password';
const unique = () => `${Math.random().toString(36).slice(2)}@example.test`;

async function register(email = unique()) {
  const res = await call('POST', '/auth/register', {
    json: { companyName: 'New Co', name: 'Founder', email, password: PASSWORD },
  });
  expect(res.status, res.text).to.equal(201);
  return { email, ...(res.body as { companyId: string; personId: string }) };
}

describe('accounts: registration, activation, password reset', () => {
  it('registers a company with its first admin, who can sign in only after activating by the mailed token', async () => {
    const { email, companyId, personId } = await register();
    const company = await testEnv().knex('companies').where({ id: companyId }).first();
    expect(company).to.include({ status: 'active', plan: null });
    const person = await testEnv().knex('people').where({ id: personId }).first();
    expect(person).to.include({ role: 'admin', status: 'not_activated', companyId });

    const before = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
    expect(expectErrorBody(before, 403).message).to.equal('the account is not activated');

    const token = await tokenFromMail(email, /Activate/);
    const activated = await call('POST', '/auth/activate', { json: { token } });
    expect(activated.status, activated.text).to.equal(200);
    const after = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
    expect(after.status).to.equal(200);

    // the token works once
    expectErrorBody(await call('POST', '/auth/activate', { json: { token } }), 401);
  });

  it('replays a registration retried with the same Idempotency-Key (one company, one mail)', async () => {
    const email = unique();
    const send = () =>
      call('POST', '/auth/register', {
        ip: '198.19.7.7',
        headers: { 'idempotency-key': `register-${email}` },
        json: { companyName: 'Retry Co', name: 'Founder', email, password: PASSWORD },
      });
    const first = await send();
    expect(first.status, first.text).to.equal(201);
    const again = await send();
    expect(again.status, again.text).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const people = await testEnv().knex('people').whereRaw('lower(email) = ?', [email]);
    expect(people).to.have.lengthOf(1);
    await tokenFromMail(email, /Activate/);
    expect(mailsTo(email)).to.have.lengthOf(1);
  });

  it('answers 409 for an address already registered (any case)', async () => {
    const { email } = await register();
    const res = await call('POST', '/auth/register', {
      json: { companyName: 'Dup', name: 'x', email: email.toUpperCase(), password: PASSWORD },
    });
    expect(expectErrorBody(res, 409).message).to.equal('an account with this address already exists');
  });

  it('validates the registration body, listing every mistake', async () => {
    const res = await call('POST', '/auth/register', {
      json: { companyName: '', email: 'not-an-address', password: 'short' },
    });
    const { message } = expectErrorBody(res, 400);
    expect(message).to.include.members([
      'body.name is required',
      'body.companyName must NOT have fewer than 1 characters',
      'body.email must match format "email"',
      'body.password must NOT have fewer than 10 characters',
    ]);
  });

  it('resend activation: a new token, the old one stops working; unknown addresses get the same 202', async () => {
    const { email } = await register();
    const first = await tokenFromMail(email, /Activate/);
    expect((await call('POST', '/auth/resend-activation', { json: { email } })).status).to.equal(202);
    const unknown = await call('POST', '/auth/resend-activation', { json: { email: unique() } });
    expect(unknown.status).to.equal(202);
    const deadline = Date.now() + 5000;
    while (mailsTo(email).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const second = await tokenFromMail(email, /Activate/);
    expect(second).to.not.equal(first);
    expectErrorBody(await call('POST', '/auth/activate', { json: { token: first } }), 401);
    expect((await call('POST', '/auth/activate', { json: { token: second } })).status).to.equal(200);
  });

  it('forgot and reset password: the new password works, the old does not, every session ends', async () => {
    const person = await createPerson(await createCompany());
    const session = await signIn(person);
    expect((await call('POST', '/auth/forgot-password', { json: { email: person.email } })).status).to.equal(
      202,
    );
    const token = await tokenFromMail(person.email, /Reset/);
    const reset = await call('POST', '/auth/reset-password', {
      json: { token, password: 'a brand new password' },
    });
    expect(reset.status, reset.text).to.equal(204);
    expectErrorBody(
      await call('POST', '/auth/login', { json: { email: person.email, password: person.password } }),
      401,
    );
    expect(
      (await call('POST', '/auth/login', { json: { email: person.email, password: 'a brand new password' } }))
        .status,
    ).to.equal(200);
    expectErrorBody(await call('GET', '/_test/whoami', { token: session.accessToken }), 401);
    expectErrorBody(
      await call('POST', '/auth/reset-password', { json: { token, password: 'another new password' } }),
      401,
    );
  });

  it('forgot password for an unknown address answers the same 202 and sends nothing', async () => {
    const email = unique();
    expect((await call('POST', '/auth/forgot-password', { json: { email } })).status).to.equal(202);
    // an explicit signal instead of a pause: a reset asked for afterwards by a known person arrives; a
    // mail for the unknown address, had one been sent, would have been on its way before it
    const known = await createPerson(await createCompany());
    expect((await call('POST', '/auth/forgot-password', { json: { email: known.email } })).status).to.equal(
      202,
    );
    await tokenFromMail(known.email, /reset/i);
    expect(mailsTo(email)).to.have.lengthOf(0);
  });

  it('forgot password and resend activation do not wait for the mail server (no timing hint that an address exists)', async () => {
    // a mail server that accepts connections and never says a word: waiting on it would take 5 s (greeting timeout)
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    const { deps } = testEnv();
    const config = { ...deps.config, mail: { ...deps.config.mail, smtpUrl: `smtp://127.0.0.1:${port}` } };
    const app = createApp({ ...deps, config, mailer: createMailer(config, deps.logger) });
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const person = await createPerson(await createCompany());
      const { email: pending } = await register();
      for (const [path, email] of [
        ['/auth/forgot-password', person.email],
        ['/auth/resend-activation', pending],
      ]) {
        const started = Date.now();
        const res = await fetch(base + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email }),
        });
        expect(res.status).to.equal(202);
        expect(Date.now() - started, path).to.be.below(2000);
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('the operator command creates an active company whose admin can sign in at once', async () => {
    const email = unique();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        path.join(ROOT, 'dist', 'scripts', 'create-company.js'),
        '--company',
        'Ops Co',
        '--email',
        email,
        '--plan',
        'basic',
      ],
      { env: { ...process.env, DATABASE_URL: testEnv().config.databaseUrl, ADMIN_PASSWORD: PASSWORD } },
    );
    const created = JSON.parse(stdout) as { companyId: string };
    const login = await call('POST', '/auth/login', { json: { email, password: PASSWORD } });
    expect(login.status, login.text).to.equal(200);
    const company = await call('GET', '/companies/me', { token: login.body.accessToken });
    expect(company.body).to.include({
      id: created.companyId,
      name: 'Ops Co',
      status: 'active',
      plan: 'basic',
    });
  });
});
