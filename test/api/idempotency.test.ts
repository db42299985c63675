import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { openApiPath } from '../../api/openapi';
import { routes } from '../../api/routes';
import { apiClient } from '../helpers/client';
import { createApiKey, createPerson, createTeam, tokenFor } from '../helpers/factories';
import { call, expectErrorBody, randomClientAddress } from '../helpers/http';
import { ROOT, testEnv } from '../helpers/env';
import { eventually } from '../helpers/temporal';
import { gate, platformTestRoutes, type PlatformTestRoutes } from '../helpers/platformRoutes';
import { startApp } from '../helpers/servers';

async function keysOf(companyId: string): Promise<number> {
  const row = (await testEnv().knex('apiKeys').where({ companyId }).count({ n: '*' }).first()) as {
    n: string;
  };
  return Number(row.n);
}

describe('Idempotency-Key', () => {
  let baseUrl: string;
  before(async () => {
    baseUrl = (await startApp({ extraRoutes: platformTestRoutes })).baseUrl;
  });
  afterEach(() => gate.open());

  it('replays the first answer (status and exact body) without doing the work again', async () => {
    const team = await createTeam();
    const api = apiClient({ token: team.adminToken });
    const idempotencyKey = randomUUID();
    const body = { name: 'ci', scopes: ['files:read' as const] };
    const first = await api.post('/api-keys', { body, idempotencyKey });
    const again = await api.post('/api-keys', { body, idempotencyKey });
    expect(first.status).to.equal(201);
    expect(again.status).to.equal(201);
    expect(again.text).to.equal(first.text); // the same full key, shown again to the same caller
    expect(again.body.key).to.match(/^svc_live_/);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    expect(await keysOf(team.company.id)).to.equal(1);
    // without a key, the same request creates again
    await api.post('/api-keys', { body });
    expect(await keysOf(team.company.id)).to.equal(2);
  });

  it('keeps the remembered answer encrypted: a key shown once is not stored in clear', async () => {
    const team = await createTeam();
    const idempotencyKey = randomUUID();
    const res = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'secret', scopes: ['files:read'] },
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(res.status).to.equal(201);
    const rows = await testEnv().knex('idempotencyKeys').where({ key: idempotencyKey });
    expect(rows).to.have.lengthOf(1);
    expect(JSON.stringify(rows)).not.to.include(res.body.key.slice(22));
    const replayed = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'secret', scopes: ['files:read'] },
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(replayed.body.key).to.equal(res.body.key);
  });

  it('gives 422 for the same key with a different request, and for another person of the company', async () => {
    const team = await createTeam();
    const idempotencyKey = randomUUID();
    const body = { name: 'one', scopes: ['files:read' as const] };
    expect(
      (await apiClient({ token: team.adminToken }).post('/api-keys', { body, idempotencyKey })).status,
    ).to.equal(201);
    const changed = await apiClient({ token: team.adminToken }).post('/api-keys', {
      body: { ...body, name: 'two' },
      idempotencyKey,
    });
    expect(expectErrorBody(changed, 422).message).to.equal(
      'Idempotency-Key was already used for a different request',
    );
    // a colleague must never receive someone else's answer (here: the full API key)
    const colleague = await apiClient({ token: team.employeeToken }).post('/api-keys', {
      body,
      idempotencyKey,
    });
    expectErrorBody(colleague, 422);
    expect(colleague.text).not.to.include('svc_live_');
    expect(await keysOf(team.company.id)).to.equal(1);
  });

  it('keys are scoped to the company: another company may use the same key', async () => {
    const a = await createTeam();
    const b = await createTeam();
    const idempotencyKey = randomUUID();
    const body = { name: 'same', scopes: ['files:read' as const] };
    const ra = await apiClient({ token: a.adminToken }).post('/api-keys', { body, idempotencyKey });
    const rb = await apiClient({ token: b.adminToken }).post('/api-keys', { body, idempotencyKey });
    expect([ra.status, rb.status]).to.deep.equal([201, 201]);
    expect(ra.body.id).not.to.equal(rb.body.id);
    expect(await keysOf(a.company.id)).to.equal(1);
    expect(await keysOf(b.company.id)).to.equal(1);
  });

  it('parallel duplicates create one resource; the others get 409 while it runs, then the replay', async () => {
    const team = await createTeam();
    const api = apiClient<PlatformTestRoutes>({ token: team.adminToken, baseUrl });
    const idempotencyKey = randomUUID();
    gate.close();
    const callsBefore = gate.calls;
    const first = api.post('/_test/things', { body: { name: 'x' }, idempotencyKey });
    await eventually(async () => gate.calls > callsBefore, { what: 'the first request to start' });
    const duplicates = await Promise.all(
      Array.from({ length: 8 }, () => api.post('/_test/things', { body: { name: 'x' }, idempotencyKey })),
    );
    for (const d of duplicates) {
      expect(expectErrorBody(d, 409).message).to.equal(
        'a request with this Idempotency-Key is still being processed; retry shortly',
      );
      expect(d.headers.get('retry-after')).to.equal('1');
    }
    gate.open();
    const done = await first;
    expect(done.status).to.equal(201);
    const replay = await api.post('/_test/things', { body: { name: 'x' }, idempotencyKey });
    expect(replay.status).to.equal(201);
    expect(replay.text).to.equal(done.text);
    expect(replay.headers.get('location')).to.equal(done.headers.get('location'));
    expect(gate.calls - callsBefore).to.equal(1);
  });

  it('parallel duplicates through the real route create exactly one API key', async () => {
    const team = await createTeam();
    const api = apiClient({ token: team.adminToken });
    const idempotencyKey = randomUUID();
    const body = { name: 'race', scopes: ['files:read' as const] };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => api.post('/api-keys', { body, idempotencyKey })),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).to.be.at.least(1);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).to.equal(true);
    expect(new Set(created.map((a) => a.text)).size).to.equal(1);
    expect(await keysOf(team.company.id)).to.equal(1);
  });

  it('an error is not remembered: the same key may be retried once the request is fixed', async () => {
    const team = await createTeam();
    const api = apiClient({ token: team.adminToken });
    const idempotencyKey = randomUUID();
    const bad = await api.post('/api-keys', {
      body: { name: 'x'.repeat(81), scopes: ['files:read'] },
      idempotencyKey,
    });
    expectErrorBody(bad, 400);
    const good = await api.post('/api-keys', {
      body: { name: 'fixed', scopes: ['files:read'] },
      idempotencyKey,
    });
    expect(good.status).to.equal(201);
  });

  it('the answer stands when its record cannot be written: the work is done once, the key stays claimed', async () => {
    const team = await createTeam();
    const { knex } = testEnv();
    const api = apiClient({ token: team.adminToken });
    const fn = `fail_idempotency_${team.company.id.replace(/-/g, '')}`;
    // in this run's database only: recording this company's answers (and releasing its claims) fails
    await knex.raw(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if old.company_id = '${team.company.id}' then raise exception 'injected: database failure'; end if;
        return case when tg_op = 'DELETE' then old else new end;
      end $$`);
    await knex.raw(
      `create trigger ${fn} before update or delete on idempotency_keys for each row execute function ${fn}()`,
    );
    const idempotencyKey = randomUUID();
    try {
      const first = await api.post('/api-keys', {
        body: { name: 'once', scopes: ['files:read'] },
        idempotencyKey,
      });
      expect(first.status, first.text).to.equal(201);
      expect(first.body.name).to.equal('once');
      // a refusal keeps its status too
      const refused = await api.post('/api-keys', {
        body: { name: 'x'.repeat(81), scopes: ['files:read'] },
        idempotencyKey: randomUUID(),
      });
      expectErrorBody(refused, 400);
    } finally {
      await knex.raw(`drop trigger ${fn} on idempotency_keys`);
      await knex.raw(`drop function ${fn}()`);
    }
    // the key is still claimed: a retry does not run the request again
    const retry = await api.post('/api-keys', {
      body: { name: 'once', scopes: ['files:read'] },
      idempotencyKey,
    });
    expectErrorBody(retry, 409);
    expect(await keysOf(team.company.id)).to.equal(1);
  });

  it('a key is kept 24 hours; once expired it may be used again, and expired records are swept', async () => {
    const team = await createTeam();
    const { knex } = testEnv();
    const api = apiClient({ token: team.adminToken });
    const idempotencyKey = randomUUID();
    await api.post('/api-keys', { body: { name: 'one', scopes: ['files:read'] }, idempotencyKey });
    const row = await knex('idempotencyKeys')
      .where({ scope: `company:${team.company.id}`, key: idempotencyKey })
      .first();
    const ttlHours = (row.expiresAt.getTime() - row.createdAt.getTime()) / 3600_000;
    expect(ttlHours).to.be.closeTo(24, 0.01);
    expect(row.companyId).to.equal(team.company.id);

    // another company's record expired long ago: any claim sweeps it
    const other = await createTeam();
    const otherKey = randomUUID();
    await apiClient({ token: other.adminToken }).post('/api-keys', {
      body: { name: 'o', scopes: ['files:read'] },
      idempotencyKey: otherKey,
    });
    await knex('idempotencyKeys')
      .whereIn('key', [idempotencyKey, otherKey])
      .update({ expiresAt: knex.raw(`now() - interval '1 second'`) });
    const reused = await api.post('/api-keys', {
      body: { name: 'two', scopes: ['files:read'] },
      idempotencyKey,
    });
    expect(reused.status).to.equal(201);
    expect(reused.body.name).to.equal('two');
    expect(await knex('idempotencyKeys').where({ key: otherKey }).first()).to.equal(undefined);
  });

  it('a request that runs longer than the lease keeps its claim: a retry still gets 409, the work is done once', async () => {
    // a lease of 2 s (renewed every 2/3 s while the request runs), as the 5 minutes of a slow upload
    const short = (await startApp({ extraRoutes: platformTestRoutes, idempotencyLeaseSeconds: 2 })).baseUrl;
    const team = await createTeam();
    const api = apiClient<PlatformTestRoutes>({ token: team.adminToken, baseUrl: short });
    const idempotencyKey = randomUUID();
    gate.close();
    const callsBefore = gate.calls;
    const first = api.post('/_test/things', { body: { name: 'slow' }, idempotencyKey });
    await eventually(async () => gate.calls > callsBefore, { what: 'the first request to start' });
    await new Promise((resolve) => setTimeout(resolve, 3500)); // past the lease
    const retry = api.post('/_test/things', { body: { name: 'slow' }, idempotencyKey });
    const early = await Promise.race([retry, new Promise((resolve) => setTimeout(resolve, 2000, null))]);
    gate.open();
    const [done, again] = await Promise.all([first, retry]);
    expect(early, 'the retry was answered at once').to.not.equal(null);
    expect(done.status).to.equal(201);
    expectErrorBody(again, 409);
    expect(gate.calls - callsBefore).to.equal(1);
  });

  it('a claim abandoned by a crashed process is taken over after its lease', async () => {
    const team = await createTeam();
    const { knex } = testEnv();
    const idempotencyKey = randomUUID();
    await knex('idempotencyKeys').insert({
      scope: `company:${team.company.id}`,
      key: idempotencyKey,
      companyId: team.company.id,
      fingerprint: 'whatever',
      state: 'running',
      lockedUntil: knex.raw(`now() - interval '1 second'`),
      expiresAt: knex.raw(`now() + interval '1 day'`),
    });
    const res = await apiClient({ token: team.adminToken }).post('/api-keys', {
      body: { name: 'after crash', scopes: ['files:read'] },
      idempotencyKey,
    });
    expect(res.status).to.equal(201);
  });

  it('API keys are scoped by their company too', async () => {
    const team = await createTeam();
    const key = await createApiKey(team.admin, ['files:write']);
    const api = apiClient<PlatformTestRoutes>({ token: key, baseUrl });
    const idempotencyKey = randomUUID();
    const a = await api.post('/_test/things', { body: { name: 'k' }, idempotencyKey });
    const b = await api.post('/_test/things', { body: { name: 'k' }, idempotencyKey });
    expect(b.text).to.equal(a.text);
    const stored = await testEnv().knex('idempotencyKeys').where({ key: idempotencyKey }).first();
    expect(stored.scope).to.equal(`company:${team.company.id}`);
    // the key's owner with a session is another caller
    const person = await createPerson(team.company, { role: 'admin' });
    const bySession = await apiClient<PlatformTestRoutes>({ token: await tokenFor(person), baseUrl }).post(
      '/_test/things',
      {
        body: { name: 'k' },
        idempotencyKey,
      },
    );
    expectErrorBody(bySession, 422);
  });

  it('on a public route the key is scoped to the client address', async () => {
    const idempotencyKey = randomUUID();
    const ip = randomClientAddress();
    const api = apiClient<PlatformTestRoutes>({ baseUrl, ip });
    const a = await api.post('/_test/public-things', { body: { name: 'p' }, idempotencyKey });
    const b = await api.post('/_test/public-things', { body: { name: 'p' }, idempotencyKey });
    const elsewhere = await api.with({ ip: randomClientAddress() }).post('/_test/public-things', {
      body: { name: 'p' },
      idempotencyKey,
    });
    expect(b.text).to.equal(a.text);
    expect(elsewhere.status).to.equal(201);
    expect(elsewhere.body.id).not.to.equal(a.body.id);
  });

  it('keeps no bare hash of the request: a password in the body cannot be guessed from the record', async () => {
    const idempotencyKey = randomUUID();
    const ip = randomClientAddress();
    const body = {
      companyName: 'Hash Co',
      name: 'Ada',
      email: `ada-${randomUUID().slice(0, 8)}@example.test`,
      password: 'summer2026!',
    };
    const first = await call('POST', '/auth/register', {
      ip,
      json: body,
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(first.status).to.equal(201);
    const [row] = await testEnv().knex('idempotencyKeys').where({ key: idempotencyKey });
    // what anyone reading the table could compute for each guessed password: method, path, query, caller, body
    const sorted = Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
    const bare = createHash('sha256')
      .update(JSON.stringify(['POST', '/auth/register', '', 'public', sorted]))
      .digest('hex');
    expect(row.fingerprint).to.match(/^[0-9a-f]{64}$/);
    expect(row.fingerprint).not.to.equal(bare);
    // the record still recognises the same request, and another one
    const again = await call('POST', '/auth/register', {
      ip,
      json: body,
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(again.text).to.equal(first.text);
    const other = await call('POST', '/auth/register', {
      ip,
      json: { ...body, password: 'winter2026!' },
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expectErrorBody(other, 422);
  });

  it('docs/platform.md names every route that honours it, and no other', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/platform.md'), 'utf8');
    const today =
      /set `idempotent: true` on their spec \(today: ([^)]*(?:\([^)]*\)[^)]*)*)\)\. On those/.exec(doc);
    expect(today, 'the list in docs/platform.md').to.not.equal(null);
    const listed = [...today![1].matchAll(/`(POST|PUT|PATCH|DELETE) ([^`]+)`/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    const honouring = routes
      .filter((r) => r.idempotent)
      .map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`);
    expect([...listed].sort()).to.deep.equal([...honouring].sort());
  });

  it('refuses a malformed key with 400, and ignores the header on routes that create nothing', async () => {
    const team = await createTeam();
    const bad = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'x', scopes: ['files:read'] },
      headers: { 'Idempotency-Key': 'x'.repeat(256) },
    });
    expect(expectErrorBody(bad, 400).message).to.equal(
      'Idempotency-Key must be 1 to 255 visible ASCII characters',
    );
    const idempotencyKey = randomUUID();
    const api = apiClient({ token: team.adminToken });
    await api.patch('/subscriptions/me', { body: { plan: 'basic' }, idempotencyKey });
    const second = await api.patch('/subscriptions/me', { body: { plan: 'premium' }, idempotencyKey });
    expect(second.status).to.equal(200);
    expect(second.body.plan).to.equal('premium');
  });
});
