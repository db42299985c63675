/**
 * Comments through HTTP (issue 15 item 1): sessions write, keys never (rule 12); files:read reads; a comment
 * follows its file's visibility (404); author-only edits, author-or-admin deletes; mentions notify only
 * people who can see the file; deleting a file deletes its comments; every change audited; a second company
 * sees nothing.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createApiKey, createPerson, tokenFor, createTeamAndOther, type Team } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';
import { csv, uploadFile } from '../helpers/files';
import { auditOf, notificationsOfPerson } from '../helpers/collab';
import { SCOPES } from '../../api/routing';

async function upload(token: string, visibility: 'private' | 'company') {
  const res = await uploadFile(csv(3), { token, visibility });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function comment(token: string, fileId: string, body: string, extra: Record<string, unknown> = {}) {
  return call('POST', `/files/${fileId}/comments`, { token, json: { body, ...extra } });
}

describe('comments', function () {
  this.timeout(60_000);
  let team: Team;
  let other: Team;

  before(async () => {
    ({ team, other } = await createTeamAndOther());
  });

  it('a session comments on a file it sees; the list is oldest first with stable cursors; fields as documented', async () => {
    const fileId = await upload(team.adminToken, 'company');
    const first = await comment(team.employeeToken, fileId, 'first', { version: 1 });
    expect(first.status, first.text).to.equal(201);
    expect(first.headers.get('location')).to.equal(`/comments/${first.body.id}`);
    expect(first.body).to.include({
      fileId,
      version: 1,
      authorId: team.employee.id,
      body: 'first',
      editedAt: null,
    });
    expect(Object.keys(first.body).sort()).to.deep.equal(
      ['authorId', 'body', 'createdAt', 'editedAt', 'fileId', 'id', 'version'].sort(),
    );
    for (let i = 0; i < 4; i++)
      expect((await comment(team.adminToken, fileId, `c${i}`)).status).to.equal(201);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await call('GET', `/files/${fileId}/comments?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token: team.employeeToken,
      });
      expect(res.status, res.text).to.equal(200);
      seen.push(...res.body.data.map((c: { body: string }) => c.body));
      // a comment added while paging comes after every earlier one: the next pages still hold each once
      if (page === 0) await comment(team.adminToken, fileId, 'late');
      if (!res.body.meta.hasMore) break;
      cursor = res.body.meta.nextCursor;
    }
    expect(seen).to.deep.equal(['first', 'c0', 'c1', 'c2', 'c3', 'late']);
    const one = await call('GET', `/comments/${first.body.id}`, { token: team.adminToken });
    expect(one.body).to.deep.equal(first.body);
  });

  it('body of 1 to 5000 characters; a version that does not exist is 404; unknown fields 400', async () => {
    const fileId = await upload(team.adminToken, 'company');
    expect(expectErrorBody(await comment(team.adminToken, fileId, ''), 400).message).to.match(/body/);
    expect(expectErrorBody(await comment(team.adminToken, fileId, 'x'.repeat(5001)), 400).message).to.match(
      /body/,
    );
    expect((await comment(team.adminToken, fileId, 'x'.repeat(5000))).status).to.equal(201);
    expectErrorBody(await comment(team.adminToken, fileId, 'x', { version: 7 }), 404);
    expectErrorBody(await comment(team.adminToken, fileId, 'x', { colour: 'red' }), 400);
  });

  it('rule 12: keys never write comments (403 even with every scope); a files:read key reads them', async () => {
    const fileId = await upload(team.adminToken, 'company');
    const mine = await comment(team.adminToken, fileId, 'by a person');
    const all = await createApiKey(team.admin, [...SCOPES]);
    expectErrorBody(await comment(all, fileId, 'by a key'), 403);
    expectErrorBody(
      await call('PATCH', `/comments/${mine.body.id}`, { token: all, json: { body: 'k' } }),
      403,
    );
    expectErrorBody(await call('DELETE', `/comments/${mine.body.id}`, { token: all }), 403);
    const reader = await createApiKey(team.admin, ['files:read']);
    const list = await call('GET', `/files/${fileId}/comments`, { token: reader });
    expect(list.status).to.equal(200);
    expect(list.body.data.map((c: { body: string }) => c.body)).to.deep.equal(['by a person']);
    const noScope = await createApiKey(team.admin, ['notifications:read']);
    expectErrorBody(await call('GET', `/files/${fileId}/comments`, { token: noScope }), 403);
    // nothing was written by the keys
    const rows = await testEnv().knex('comments').where({ fileId });
    expect(rows).to.have.length(1);
  });

  it('a comment follows its file: who cannot see the file gets 404 for its comments and each of them', async () => {
    const privateFile = await upload(team.adminToken, 'private');
    const c = await comment(team.adminToken, privateFile, 'admin only');
    expect(c.status).to.equal(201);
    for (const token of [team.employeeToken, other.adminToken, other.employeeToken]) {
      expectErrorBody(await call('GET', `/files/${privateFile}/comments`, { token }), 404);
      expectErrorBody(await call('GET', `/comments/${c.body.id}`, { token }), 404);
      expectErrorBody(await call('PATCH', `/comments/${c.body.id}`, { token, json: { body: 'x' } }), 404);
      expectErrorBody(await call('DELETE', `/comments/${c.body.id}`, { token }), 404);
      expectErrorBody(await comment(token, privateFile, 'sneaky'), 404);
    }
    // made company-visible, the employee sees it; the other company never does
    await call('PATCH', `/files/${privateFile}`, { token: team.adminToken, json: { visibility: 'company' } });
    expect((await call('GET', `/comments/${c.body.id}`, { token: team.employeeToken })).status).to.equal(200);
    expectErrorBody(await call('GET', `/comments/${c.body.id}`, { token: other.adminToken }), 404);
  });

  it('edit: its author only (403 for others who see it); delete: its author or an admin', async () => {
    const fileId = await upload(team.adminToken, 'company');
    const colleague = await createPerson(team.company, { role: 'employee' });
    const colleagueToken = await tokenFor(colleague);
    const byEmployee = await comment(team.employeeToken, fileId, 'draft');
    expectErrorBody(
      await call('PATCH', `/comments/${byEmployee.body.id}`, {
        token: team.adminToken,
        json: { body: 'no' },
      }),
      403,
    );
    const edited = await call('PATCH', `/comments/${byEmployee.body.id}`, {
      token: team.employeeToken,
      json: { body: 'final' },
    });
    expect(edited.status, edited.text).to.equal(200);
    expect(edited.body.body).to.equal('final');
    expect(edited.body.editedAt).to.be.a('string');
    expectErrorBody(await call('DELETE', `/comments/${byEmployee.body.id}`, { token: colleagueToken }), 403);
    expect(
      (await call('DELETE', `/comments/${byEmployee.body.id}`, { token: team.adminToken })).status,
    ).to.equal(204);
    expectErrorBody(await call('GET', `/comments/${byEmployee.body.id}`, { token: team.employeeToken }), 404);
    const own = await comment(colleagueToken, fileId, 'mine');
    expect((await call('DELETE', `/comments/${own.body.id}`, { token: colleagueToken })).status).to.equal(
      204,
    );
  });

  it('each change is audited in its transaction, with the comment, its file and the actor (never the text)', async () => {
    const fileId = await upload(team.adminToken, 'company');
    const created = await comment(team.employeeToken, fileId, 'a secret plan');
    const edited = await call('PATCH', `/comments/${created.body.id}`, {
      token: team.employeeToken,
      json: { body: 'a better plan' },
    });
    const deleted = await call('DELETE', `/comments/${created.body.id}`, { token: team.adminToken });
    const actions = [
      ...(await auditOf(created)),
      ...(await auditOf(edited)),
      ...(await auditOf(deleted)),
    ].map((e) => ({
      action: e.action,
      resourceId: e.resourceId,
      actor: e.actorPersonId,
      fileId: e.details.fileId,
    }));
    expect(actions).to.deep.equal([
      { action: 'comment.created', resourceId: created.body.id, actor: team.employee.id, fileId },
      { action: 'comment.updated', resourceId: created.body.id, actor: team.employee.id, fileId },
      { action: 'comment.deleted', resourceId: created.body.id, actor: team.admin.id, fileId },
    ]);
    const text = JSON.stringify(await testEnv().knex('auditLog').where({ resourceId: created.body.id }));
    expect(text).to.not.include('plan');
  });

  it('mentions by id or e-mail notify people who can see the file, once; others are not notified and nothing tells', async () => {
    const fileId = await upload(team.employeeToken, 'private'); // seen by the employee (uploader) and admins
    const outsider = await createPerson(team.company, {
      role: 'employee',
      email: `Out-${randomUUID().slice(0, 6)}@example.test`,
    });
    const secondAdmin = await createPerson(team.company, { role: 'admin' });
    const stranger = other.employee; // another company: never found
    const body =
      `@${secondAdmin.id} and @${outsider.id}, also @${outsider.email.toUpperCase()}, ` +
      `and @${stranger.id} @${stranger.email}.`;
    const res = await comment(team.adminToken, fileId, body);
    expect(res.status, res.text).to.equal(201);
    const mention = await notificationsOfPerson(secondAdmin.id, 'comment.mention');
    expect(mention).to.have.length(1);
    expect(mention[0]).to.include({ resourceType: 'comment', resourceId: res.body.id });
    expect(mention[0].data).to.deep.equal({ fileId, commentId: res.body.id, version: null });
    expect(await notificationsOfPerson(outsider.id)).to.deep.equal([]);
    expect(await notificationsOfPerson(stranger.id)).to.deep.equal([]);
    // the uploader hears of a comment on their file; the author never hears of their own
    expect(await notificationsOfPerson(team.employee.id, 'comment.on_your_file')).to.have.length(1);
    // a mention of someone who cannot see it answers exactly like one of no one
    const plain = await comment(team.adminToken, fileId, 'no mention');
    expect(Object.keys(plain.body).sort()).to.deep.equal(Object.keys(res.body).sort());
    expect(plain.status).to.equal(res.status);
    // an edit that mentions the same person again does not notify twice; a new person is notified
    const byMail = `@${team.employee.email}`;
    await call('PATCH', `/comments/${res.body.id}`, {
      token: team.adminToken,
      json: { body: `${body} ${byMail}` },
    });
    expect(await notificationsOfPerson(secondAdmin.id, 'comment.mention')).to.have.length(1);
    expect(await notificationsOfPerson(team.employee.id, 'comment.mention')).to.have.length(1);
    // the author is never notified of their own comment
    const own = (await notificationsOfPerson(team.admin.id)).filter((x) => x.data.fileId === fileId);
    expect(own).to.deep.equal([]);

    // an uploader mentioned in a new comment hears of the mention only; an edit dropping the mention is not a
    // new comment: nothing more reaches them
    const mentioning = await comment(team.adminToken, fileId, `look @${team.employee.id}`);
    const ofIt = async () =>
      (await notificationsOfPerson(team.employee.id))
        .filter((x) => x.resourceId === mentioning.body.id)
        .map((x) => x.kind);
    expect(await ofIt()).to.deep.equal(['comment.mention']);
    const dropped = await call('PATCH', `/comments/${mentioning.body.id}`, {
      token: team.adminToken,
      json: { body: 'look' },
    });
    expect(dropped.status, dropped.text).to.equal(200);
    expect(await ofIt()).to.deep.equal(['comment.mention']);
  });

  it('a replayed idempotent request creates one comment and notifies once', async () => {
    const fileId = await upload(team.employeeToken, 'company');
    const headers = { 'Idempotency-Key': randomUUID() };
    const json = { body: `look @${team.employee.id}` };
    const a = await call('POST', `/files/${fileId}/comments`, { token: team.adminToken, json, headers });
    const b = await call('POST', `/files/${fileId}/comments`, { token: team.adminToken, json, headers });
    expect(a.status).to.equal(201);
    expect(b.body).to.deep.equal(a.body);
    expect(await testEnv().knex('comments').where({ fileId })).to.have.length(1);
    const n = (await notificationsOfPerson(team.employee.id)).filter((x) => x.data.fileId === fileId);
    expect(n.map((x) => x.kind)).to.deep.equal(['comment.mention']);
  });

  it('deleting a file deletes its comments', async () => {
    const fileId = await upload(team.adminToken, 'company');
    await comment(team.adminToken, fileId, 'one');
    await comment(team.employeeToken, fileId, 'two');
    expect(await testEnv().knex('comments').where({ fileId })).to.have.length(2);
    expect((await call('DELETE', `/files/${fileId}`, { token: team.adminToken })).status).to.equal(204);
    expect(await testEnv().knex('comments').where({ fileId })).to.have.length(0);
    expectErrorBody(await call('GET', `/files/${fileId}/comments`, { token: team.adminToken }), 404);
  });
});
