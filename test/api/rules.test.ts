/** The quality-rule endpoints through HTTP, as a client calls them (issue 13 items 1 and the Tests list). */
import { expect } from 'chai';
import { createApiKey, createTeam, createTeamAndOther, type Team } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { csv, uploadFile } from '../helpers/files';

const NOT_NULL = { name: 'email present', kind: 'not_null', column: 'email' };

function create(token: string, json: unknown, headers: Record<string, string> = {}) {
  return call('POST', '/rules', { token, json, headers });
}

describe('quality rules API', function () {
  this.timeout(60_000);
  let team: Team;
  let other: Team;

  before(async () => {
    ({ team, other } = await createTeamAndOther());
  });

  it('creates a rule (201) with defaults, audited', async () => {
    const res = await create(team.adminToken, {
      name: 'age in range',
      kind: 'range',
      column: 'age',
      params: { min: 0, max: 120 },
      tolerance: 0.05,
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.deep.include({
      name: 'age in range',
      kind: 'range',
      column: 'age',
      params: { min: 0, max: 120 },
      severity: 'error',
      tolerance: 0.05,
      active: true,
      fileIds: null,
    });
    const audit = await testEnv().knex('auditLog').where({ resourceId: res.body.id });
    expect(audit.map((a) => a.action)).to.deep.equal(['rule.created']);
    expect(audit[0]).to.include({ actorPersonId: team.admin.id, companyId: team.company.id });
  });

  it('400 listing every problem: params of another kind, min > max, unknown fields, invalid RE2', async () => {
    const res = await create(team.adminToken, {
      name: 'bad',
      kind: 'length',
      column: 'code',
      params: { min: 9, max: 2, regex: 'x' },
    });
    expect(expectErrorBody(res, 400).message).to.deep.equal([
      'body.params.regex: not a param of a length rule (it takes min, max)',
      'body.params: min (9) is greater than max (2)',
    ]);
    const unknown = await create(team.adminToken, { ...NOT_NULL, colour: 'red', extra: 1 });
    const message = expectErrorBody(unknown, 400).message;
    expect(message).to.be.an('array').with.length(2);
    expect(String(message)).to.include('colour').and.include('extra');
    const regex = await create(team.adminToken, {
      name: 'backreference',
      kind: 'pattern',
      column: 'code',
      params: { regex: '(a+)\\1' },
    });
    expect(String(expectErrorBody(regex, 400).message)).to.match(/body\.params\.regex: not a valid RE2/);
    const missing = await create(team.adminToken, { name: 'no column', kind: 'unique' });
    expect(expectErrorBody(missing, 400).message).to.equal('body.column: required for a unique rule');
    const tooMany = await create(team.adminToken, {
      name: 'many',
      kind: 'allowed_values',
      column: 'c',
      params: { values: Array.from({ length: 1001 }, (_, i) => String(i)) },
    });
    expect(expectErrorBody(tooMany, 400).message).to.equal(
      'body.params.values: at most 1000 values (got 1001)',
    );
  });

  it('lists newest first (page-number list) and reads one; reading is open to employees and files:read keys', async () => {
    const t = await createTeam({ plan: 'premium' });
    const ids: string[] = [];
    for (const name of ['first', 'second', 'third']) {
      const res = await create(t.adminToken, { ...NOT_NULL, name });
      ids.push(res.body.id);
    }
    const list = await call('GET', '/rules?limit=2', { token: t.employeeToken });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.data.map((r: { name: string }) => r.name)).to.deep.equal(['third', 'second']);
    expect(list.body.meta).to.deep.equal({ page: 1, limit: 2, total: 3, totalPages: 2 });
    const key = await createApiKey(t.employee, ['files:read']);
    const one = await call('GET', `/rules/${ids[0]}`, { token: key });
    expect(one.status, one.text).to.equal(200);
    expect(one.body.name).to.equal('first');
  });

  it("another company's rule does not exist (404) for reads and writes", async () => {
    const mine = await create(team.adminToken, { ...NOT_NULL, name: 'mine' });
    for (const [method, json] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(method, `/rules/${mine.body.id}`, { token: other.adminToken, json });
      expectErrorBody(res, 404);
    }
    const list = await call('GET', '/rules', { token: other.adminToken });
    expect(list.body.data.map((r: { id: string }) => r.id)).not.to.include(mine.body.id);
  });

  it('employees and keys without rules:write are refused (403); an admin key with rules:write may write', async () => {
    expectErrorBody(await create(team.employeeToken, NOT_NULL), 403);
    const employeeKey = await createApiKey(team.employee, ['files:read', 'files:write', 'rules:write']);
    expectErrorBody(await create(employeeKey, NOT_NULL), 403);
    const readKey = await createApiKey(team.admin, ['files:read', 'files:write']);
    expectErrorBody(await create(readKey, NOT_NULL), 403);
    const writeKey = await createApiKey(team.admin, ['rules:write']);
    const res = await create(writeKey, NOT_NULL);
    expect(res.status, res.text).to.equal(201);
    expectErrorBody(
      await call('PATCH', `/rules/${res.body.id}`, { token: team.employeeToken, json: { active: false } }),
      403,
    );
    expectErrorBody(await call('DELETE', `/rules/${res.body.id}`, { token: team.employeeToken }), 403);
  });

  it("409 at the plan's rule limit (Free: 5)", async () => {
    const free = await createTeam({ plan: 'free' });
    for (let i = 0; i < 5; i++) {
      const res = await create(free.adminToken, { ...NOT_NULL, name: `r${i}` });
      expect(res.status, res.text).to.equal(201);
    }
    const sixth = await create(free.adminToken, { ...NOT_NULL, name: 'r5' });
    expect(expectErrorBody(sixth, 409).message).to.match(/free plan allows 5 quality rules/);
  });

  it('honours Idempotency-Key on creation: a retry replays the 201 and creates nothing more', async () => {
    const t = await createTeam({ plan: 'premium' });
    const headers = { 'idempotency-key': 'rule-create-1' };
    const a = await create(t.adminToken, NOT_NULL, headers);
    const b = await create(t.adminToken, NOT_NULL, headers);
    expect(a.status).to.equal(201);
    expect(b.status).to.equal(201);
    expect(b.headers.get('idempotent-replayed')).to.equal('true');
    expect(b.body.id).to.equal(a.body.id);
    const rows = await testEnv().knex('rules').where({ companyId: t.company.id });
    expect(rows).to.have.length(1);
  });

  it('PATCH checks the whole changed rule; DELETE removes it; both audited', async () => {
    const res = await create(team.adminToken, {
      name: 'len',
      kind: 'length',
      column: 'code',
      params: { max: 5 },
    });
    const id = res.body.id as string;
    const kindOnly = await call('PATCH', `/rules/${id}`, {
      token: team.adminToken,
      json: { kind: 'pattern' },
    });
    expect(expectErrorBody(kindOnly, 400).message).to.deep.equal([
      'body.params.max: not a param of a pattern rule (it takes regex)',
      'body.params.regex: required for a pattern rule',
    ]);
    const ok = await call('PATCH', `/rules/${id}`, {
      token: team.adminToken,
      json: { kind: 'pattern', params: { regex: '[A-Z]+' }, severity: 'warn', active: false },
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.deep.include({
      kind: 'pattern',
      params: { regex: '[A-Z]+' },
      severity: 'warn',
      active: false,
    });
    const del = await call('DELETE', `/rules/${id}`, { token: team.adminToken });
    expect(del.status).to.equal(204);
    expectErrorBody(await call('GET', `/rules/${id}`, { token: team.adminToken }), 404);
    const audit = await testEnv().knex('auditLog').where({ resourceId: id }).orderBy('createdAt');
    expect(audit.map((a) => a.action)).to.deep.equal(['rule.created', 'rule.updated', 'rule.deleted']);
  });

  it('fileIds must name files of the company', async () => {
    const res = await create(team.adminToken, {
      ...NOT_NULL,
      fileIds: ['00000000-0000-4000-8000-000000000000'],
    });
    expect(expectErrorBody(res, 400).message).to.equal('body.fileIds[0]: no such file in the company');
  });

  it('a deleted file leaves the rules restricted to it: they forget it, and stay editable', async () => {
    const upload = async () => {
      const res = await uploadFile(csv(2), { token: team.adminToken });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    const [f, g] = [await upload(), await upload()];
    const both = await create(team.adminToken, { ...NOT_NULL, fileIds: [f, g] });
    const only = await create(team.adminToken, { ...NOT_NULL, name: 'only f', fileIds: [f] });
    expect(both.status, both.text).to.equal(201);
    expect(only.status, only.text).to.equal(201);
    expect((await call('DELETE', `/files/${f}`, { token: team.adminToken })).status).to.equal(204);

    const read = async (id: string) => (await call('GET', `/rules/${id}`, { token: team.adminToken })).body;
    expect((await read(both.body.id)).fileIds).to.deep.equal([g]);
    // restricted to the deleted file alone: it applies to no file now, never to every file
    expect((await read(only.body.id)).fileIds).to.deep.equal([]);
    // edits that do not name files are not refused for a file they never sent
    const renamed = await call('PATCH', `/rules/${only.body.id}`, {
      token: team.adminToken,
      json: { name: 'was only f', active: false },
    });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.deep.include({ name: 'was only f', active: false, fileIds: [] });
    // sending the deleted file is refused, naming the body's item
    const again = await call('PATCH', `/rules/${both.body.id}`, {
      token: team.adminToken,
      json: { fileIds: [g, f] },
    });
    expect(expectErrorBody(again, 400).message).to.equal('body.fileIds[1]: no such file in the company');
    // the deletion's audit entry says how many rules it narrowed
    const [entry] = await testEnv().knex('auditLog').where({ resourceId: f, action: 'file.deleted' });
    expect(entry.details).to.include({ rulesNarrowed: 2 });
  });
});
