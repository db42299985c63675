/**
 * GET /audit-log through HTTP (issue 15 items 5–7): audit:read for admins' sessions and keys; each entry's
 * fields (actor with the key and its prefix, resource, outcome, correlation id, client address, changes);
 * every filter; cursors stable while entries are added; sign-in failures, refresh reuse and key revocation
 * audited; append-only in the database; a second company sees nothing.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { safeDetails } from '../../domain/audit/record';
import { asSystem, withCompany } from '../../db/unitOfWork';
import { testEnv } from '../helpers/env';
import { createTeam, DEFAULT_PASSWORD, signIn, createTeamAndOther, type Team } from '../helpers/factories';
import { call, expectErrorBody, type HttpResponse } from '../helpers/http';
import { csv, uploadFile } from '../helpers/files';
import { auditOf, keyWithId } from '../helpers/collab';

async function auditLog(token: string, query: Record<string, string | number> = {}): Promise<HttpResponse> {
  const qs = new URLSearchParams(
    Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  return call('GET', `/audit-log${qs ? `?${qs}` : ''}`, { token });
}

/** Every entry of the list for `query`, page by page. */
async function walk(token: string, query: Record<string, string | number> = {}) {
  const all: Array<Record<string, any>> = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await auditLog(token, { ...query, limit: 100, ...(cursor ? { cursor } : {}) });
    expect(res.status, res.text).to.equal(200);
    all.push(...res.body.data);
    if (!res.body.meta.hasMore) return all;
    cursor = res.body.meta.nextCursor;
  }
  throw new Error('too many pages');
}

describe('the audit log', function () {
  this.timeout(60_000);
  let team: Team;
  let other: Team;

  before(async () => {
    ({ team, other } = await createTeamAndOther());
  });

  it('audit:read: admins’ sessions and keys holding it; employees and keys without it 403; another company sees none of it', async () => {
    await call('PATCH', '/companies/me', { token: team.adminToken, json: { name: 'Audited Co' } });
    expect((await auditLog(team.adminToken)).status).to.equal(200);
    expectErrorBody(await auditLog(team.employeeToken), 403);
    const reader = await keyWithId(team.admin, ['audit:read']);
    const viaKey = await auditLog(reader.token);
    expect(viaKey.status).to.equal(200);
    expect(viaKey.body.data.map((e: { action: string }) => e.action)).to.include('company.updated');
    const without = await keyWithId(team.admin, ['files:read']);
    expectErrorBody(await auditLog(without.token), 403);
    // an employee's key holding audit:read (given before a demotion, say) acts as its owner: 403
    const employeeKey = await keyWithId(team.employee, ['audit:read']);
    expectErrorBody(await auditLog(employeeKey.token), 403);
    const theirs = await walk(other.adminToken);
    expect(theirs.every((e) => e.action !== 'company.updated')).to.equal(true);
    const ids = new Set((await walk(team.adminToken)).map((e) => e.id));
    expect(theirs.some((e) => ids.has(e.id))).to.equal(false);
  });

  it('an entry names the key that did it, its prefix, the resource, outcome, correlation id, client address and changes', async () => {
    const k = await keyWithId(team.admin, ['files:write']);
    const ip = '198.18.7.7';
    const up = await uploadFile(csv(2), { token: k.token, headers: { 'x-forwarded-for': ip } });
    expect(up.status, up.text).to.equal(201);
    const res = await auditLog(team.adminToken, { resourceId: up.body.id });
    expect(res.body.data).to.have.length(1);
    const [entry] = res.body.data;
    expect(entry).to.deep.equal({
      id: entry.id,
      time: entry.time,
      action: 'file.uploaded',
      actor: { type: 'apiKey', personId: team.admin.id, apiKeyId: k.id, keyPrefix: k.prefix },
      resource: { type: 'file', id: up.body.id },
      outcome: 'success',
      correlationId: up.headers.get('x-request-id'),
      clientAddress: ip,
      changes: entry.changes,
    });
    expect(entry.changes).to.be.an('object');
    expect(Date.parse(entry.time)).to.be.closeTo(Date.now(), 60_000);
  });

  it('filters: actorId, apiKeyId, action (exact or prefix*), resourceType, resourceId, from, to; unknown parameters 400', async () => {
    const t = await createTeam({ plan: 'premium' });
    const k = await keyWithId(t.employee, ['files:write']);
    await uploadFile(csv(2), { token: k.token, visibility: 'company' });
    const byAdmin = await uploadFile(csv(3), { token: t.adminToken });
    await call('PATCH', `/files/${byAdmin.body.id}`, {
      token: t.adminToken,
      json: { visibility: 'company' },
    });
    await call('POST', '/rules', { token: t.adminToken, json: { name: 'r', kind: 'not_null', column: 'a' } });
    // the sessions of createTeam are left out
    const actions = async (q: Record<string, string>) =>
      (await walk(t.adminToken, q)).map((e) => e.action as string).filter((a) => a !== 'session.started');
    expect(await actions({ apiKeyId: k.id })).to.deep.equal(['file.uploaded']);
    expect(await actions({ actorId: t.employee.id })).to.deep.equal(['file.uploaded']);
    expect(await actions({ actorId: t.admin.id })).to.deep.equal([
      'rule.created',
      'file.visibility_changed',
      'file.uploaded',
    ]);
    expect(await actions({ action: 'file.uploaded' })).to.deep.equal(['file.uploaded', 'file.uploaded']);
    expect(await actions({ action: 'file.*' })).to.deep.equal([
      'file.visibility_changed',
      'file.uploaded',
      'file.uploaded',
    ]);
    expect(await actions({ action: 'file' })).to.deep.equal([]);
    expect(await actions({ resourceType: 'rule' })).to.deep.equal(['rule.created']);
    expect(await actions({ resourceId: byAdmin.body.id as string })).to.deep.equal([
      'file.visibility_changed',
      'file.uploaded',
    ]);
    const all = await walk(t.adminToken);
    const middle = all[1].time as string;
    expect((await walk(t.adminToken, { from: middle })).map((e) => e.id)).to.deep.equal(
      all.filter((e) => e.time >= middle).map((e) => e.id),
    );
    expect((await walk(t.adminToken, { to: middle })).map((e) => e.id)).to.deep.equal(
      all.filter((e) => e.time < middle).map((e) => e.id),
    );
    expect(
      (await walk(t.adminToken, { action: 'file.*', actorId: t.admin.id, resourceType: 'file' })).length,
    ).to.equal(2);
    expect(expectErrorBody(await auditLog(t.adminToken, { colour: 'red' }), 400).message).to.equal(
      'unknown query parameter "colour"',
    );
    expectErrorBody(await auditLog(t.adminToken, { actorId: 'not-a-uuid' }), 400);
    expectErrorBody(await auditLog(t.adminToken, { from: 'yesterday' }), 400);
    // a window that ends before it begins is a mistake (as GET /analytics says), an empty one is not
    expect(
      expectErrorBody(
        await auditLog(t.adminToken, { from: '2026-11-28T00:00:00Z', to: '2026-11-01T00:00:00Z' }),
        400,
      ).message,
    ).to.equal('query.from must not be after query.to');
    const empty = await auditLog(t.adminToken, { from: middle, to: middle });
    expect(empty.status, empty.text).to.equal(200);
    expect(empty.body.data).to.deep.equal([]);
    // a cursor belongs to its filters
    const page = await auditLog(t.adminToken, { limit: 1 });
    expectErrorBody(
      await auditLog(t.adminToken, { limit: 1, action: 'file.*', cursor: page.body.meta.nextCursor }),
      400,
    );
    // ... whatever the order its parameters are written in
    const filtered = await auditLog(t.adminToken, { action: 'file.*', actorId: t.admin.id, limit: 1 });
    expect(filtered.body.meta.hasMore).to.equal(true);
    const next = await auditLog(t.adminToken, {
      actorId: t.admin.id,
      limit: 1,
      cursor: filtered.body.meta.nextCursor,
      action: 'file.*',
    });
    expect(next.status, next.text).to.equal(200);
    expect(next.body.data).to.have.length(1);
    expect(next.body.data[0].id).to.not.equal(filtered.body.data[0].id);
  });

  it('pages newest first, every entry once, while new entries are written', async () => {
    const t = await createTeam({ plan: 'premium' });
    for (let i = 0; i < 12; i++) {
      await call('PATCH', '/companies/me', { token: t.adminToken, json: { name: `Name ${i}` } });
    }
    const before = (await walk(t.adminToken)).map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await auditLog(t.adminToken, { limit: 5, ...(cursor ? { cursor } : {}) });
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      // written meanwhile: newer, so never on the pages still to come
      await call('PATCH', '/companies/me', { token: t.adminToken, json: { name: `During ${page}` } });
      if (!res.body.meta.hasMore) break;
      cursor = res.body.meta.nextCursor;
    }
    expect(seen).to.deep.equal(before);
  });

  it('sign-in failures of a known person, refresh-token reuse and key revocation are audited', async () => {
    const t = await createTeam({ plan: 'premium' });
    const wrong = await call('POST', '/auth/login', {
      json: { email: t.employee.email, password: 'not the password at all' },
    });
    expectErrorBody(wrong, 401);
    const [failure] = await auditOf(wrong);
    expect(failure).to.include({
      action: 'session.sign_in_failed',
      outcome: 'failure',
      actorPersonId: t.employee.id,
      companyId: t.company.id,
    });
    expect(JSON.stringify(failure.details)).to.not.include('not the password');
    // an unknown address belongs to no company: nothing to record, and the same answer
    const unknown = await call('POST', '/auth/login', {
      json: { email: `nobody-${randomUUID()}@example.test`, password: DEFAULT_PASSWORD },
    });
    expect(expectErrorBody(unknown, 401).message).to.equal(expectErrorBody(wrong, 401).message);
    expect(await auditOf(unknown)).to.deep.equal([]);

    const pair = await signIn(t.employee);
    const first = await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } });
    expect(first.status).to.equal(200);
    const reuse = await call('POST', '/auth/refresh', { json: { refreshToken: pair.refreshToken } });
    expectErrorBody(reuse, 401);
    const reuseEntries = await auditOf(reuse);
    expect(reuseEntries.map((e) => [e.action, e.outcome])).to.deep.include.members([
      ['session.refresh_token_reused', 'denied'],
      ['session.ended', 'success'],
    ]);

    const k = await keyWithId(t.employee, ['files:read']);
    const revoked = await call('DELETE', `/api-keys/${k.id}`, { token: t.employeeToken });
    expect(revoked.status).to.equal(204);
    const [revocation] = await auditOf(revoked);
    expect(revocation).to.include({
      action: 'api_key.revoked',
      resourceId: k.id,
      actorPersonId: t.employee.id,
    });

    const listed = (await walk(t.adminToken)).map((e) => `${e.action}:${e.outcome}`);
    expect(listed).to.include.members([
      'session.sign_in_failed:failure',
      'session.refresh_token_reused:denied',
      'api_key.revoked:success',
    ]);
  });

  it('changes never hold secrets, passwords or tokens', async () => {
    const created = await call('POST', '/api-keys', {
      token: team.adminToken,
      json: { name: 'ci', scopes: ['files:read'] },
    });
    const hook = await call('POST', '/outgoing-webhooks', {
      token: team.adminToken,
      json: { name: 'h', url: 'https://93.184.216.34/hook', events: ['file.uploaded'] },
    });
    const text = JSON.stringify([...(await auditOf(created)), ...(await auditOf(hook))]);
    expect(text).to.not.include(created.body.key);
    expect(text).to.not.include(hook.body.secret);
    expect(text).to.not.match(/whsec_|svc_live_[A-Za-z0-9]+_/);
    expect(
      safeDetails({
        password: 'x',
        refreshToken: 'y',
        nested: { secret: 'z', fields: ['password'] },
        name: 'n',
      }),
    ).to.deep.equal({
      password: '[redacted]',
      refreshToken: '[redacted]',
      nested: { secret: '[redacted]', fields: ['password'] },
      name: 'n',
    });
  });

  it('deleting a company deletes its entries (a trigger, not a foreign key) and no other company’s', async () => {
    const { knex } = testEnv();
    const [gone, kept] = [await createTeam(), await createTeam()];
    for (const t of [gone, kept])
      expect(
        (await call('PATCH', '/companies/me', { token: t.adminToken, json: { name: 'To be deleted' } }))
          .status,
      ).to.equal(200);
    const count = async (companyId: string) =>
      Number(((await knex('auditLog').where({ companyId }).count({ n: '*' }).first()) as { n: string }).n);
    expect(await count(gone.company.id)).to.be.greaterThan(0);
    const keptBefore = await count(kept.company.id);
    expect(keptBefore).to.be.greaterThan(0);
    await knex('companies').where({ id: gone.company.id }).delete();
    expect(await count(gone.company.id)).to.equal(0);
    expect(await count(kept.company.id)).to.equal(keptBefore);
    // no foreign key: writing an entry takes no lock on the company's row
    const keys = await knex.raw(
      `select conname from pg_constraint where conrelid = 'audit_log'::regclass and contype = 'f'`,
    );
    expect(keys.rows).to.deep.equal([]);
  });

  it('append-only: the API’s role and the system tasks’ role can neither update nor delete an entry, and no role can update one', async () => {
    const { appKnex, knex } = testEnv();
    await call('PATCH', '/companies/me', { token: team.adminToken, json: { name: 'Append only' } });
    const row = (await knex('auditLog').where({ companyId: team.company.id }).first()) as { id: string };
    const refused = async (work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (err) {
        return String(err);
      }
      return 'allowed';
    };
    expect(
      await refused(() =>
        withCompany(appKnex, team.company.id, (trx) =>
          trx('auditLog').where({ id: row.id }).update({ action: 'x' }),
        ),
      ),
    ).to.match(/permission denied/);
    expect(
      await refused(() =>
        withCompany(appKnex, team.company.id, (trx) => trx('auditLog').where({ id: row.id }).delete()),
      ),
    ).to.match(/permission denied/);
    expect(
      await refused(() =>
        asSystem(appKnex, 'audit-retention', (trx) => trx('auditLog').where({ id: row.id }).delete()),
      ),
    ).to.match(/permission denied/);
    expect(
      await refused(() => withCompany(appKnex, team.company.id, (trx) => trx.raw('truncate audit_log'))),
    ).to.match(/permission denied/);
    // nor through its company: deleting the company row (whose trigger removes the company's entries) is
    // refused to the API's and the worker's roles
    for (const work of [
      () =>
        withCompany(appKnex, team.company.id, (trx) =>
          trx('companies').where({ id: team.company.id }).delete(),
        ),
      () =>
        asSystem(appKnex, 'audit-retention', (trx) =>
          trx('companies').where({ id: team.company.id }).delete(),
        ),
    ])
      expect(await refused(work)).to.match(/permission denied/);
    expect(await knex('auditLog').where({ id: row.id }).first()).to.not.equal(undefined);
    // the owner too: a trigger refuses every update
    expect(await refused(() => knex('auditLog').where({ id: row.id }).update({ action: 'x' }))).to.match(
      /append-only/,
    );
    // the purge function: the system role only, and never for entries younger than 30 days
    expect(
      await refused(() =>
        withCompany(appKnex, team.company.id, (trx) =>
          trx.raw(`select purge_audit_log(now() - interval '400 days', 10)`),
        ),
      ),
    ).to.match(/permission denied/);
    expect(
      await refused(() =>
        asSystem(appKnex, 'audit-retention', (trx) => trx.raw(`select purge_audit_log(now(), 1000)`)),
      ),
    ).to.match(/younger than 30 days/);
    expect(await knex('auditLog').where({ id: row.id }).first()).to.include({ id: row.id });
  });
});
