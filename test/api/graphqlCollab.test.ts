/**
 * GraphQL over comments, notifications and the audit log (issue 18 over issue 15), through HTTP: each new type
 * answers what REST answers (cursors interchangeable both ways), the nested path file → comments → author,
 * the comments of a file the caller cannot see are never reachable (nor through the batch read itself),
 * another company's notifications and audit entries are never seen, employees are refused the audit log, and
 * comments over 50 files cost the same SQL statements as over 5.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { actingAs } from '../../db/unitOfWork';
import { commentsOfFiles } from '../../domain/comments/batch';
import { testEnv } from '../helpers/env';
import { createTeam, type Team } from '../helpers/factories';
import { countAppQueries, data, gql, insertCompanyFile } from '../helpers/graphql';
import { call } from '../helpers/http';
import { csv, uploadFile } from '../helpers/files';

async function upload(token: string, visibility: 'private' | 'company'): Promise<string> {
  const res = await uploadFile(csv(3), { token, visibility });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

async function comment(token: string, fileId: string, body: string, version?: number): Promise<string> {
  const res = await call('POST', `/files/${fileId}/comments`, { token, json: { body, version } });
  expect(res.status, res.text).to.equal(201);
  return res.body.id as string;
}

const COMMENT_FIELDS = 'id body version editedAt createdAt updatedAt author { id name role email }';

/** A GraphQL comment in REST's shape (GET /files/{id}/comments). */
function asRest(fileId: string, c: Record<string, any>) {
  return {
    id: c.id,
    fileId,
    version: c.version,
    authorId: c.author?.id ?? null,
    body: c.body,
    editedAt: c.editedAt,
    createdAt: c.createdAt,
  };
}

describe('GraphQL: comments, notifications, audit log', function () {
  this.timeout(120_000);
  let a: Team;
  let b: Team;
  let companyFile: string;
  let adminPrivate: string;
  let otherFile: string;

  before(async () => {
    a = await createTeam({ plan: 'premium' });
    b = await createTeam({ plan: 'premium' });
    companyFile = await upload(a.adminToken, 'company');
    adminPrivate = await upload(a.adminToken, 'private');
    otherFile = await upload(b.adminToken, 'company');
    // the employee comments on the admin's file (the admin is notified), the admin answers
    await comment(a.employeeToken, companyFile, 'first', 1);
    for (let i = 0; i < 4; i++) await comment(a.adminToken, companyFile, `reply ${i}`);
    await comment(a.adminToken, adminPrivate, 'a private note');
    await comment(b.employeeToken, otherFile, 'in company b');
  });

  describe('comments', () => {
    it('File.comments: oldest first, as GET /files/{id}/comments, with interchangeable cursors', async () => {
      const rest = await call('GET', `/files/${companyFile}/comments?limit=100`, { token: a.adminToken });
      expect(rest.status, rest.text).to.equal(200);
      expect(rest.body.data).to.have.length(5);
      const all = await data(
        a.adminToken,
        `query($f: ID!) { file(id: $f) { comments(first: 100) { nodes { ${COMMENT_FIELDS} } pageInfo { hasNextPage endCursor } } } }`,
        { f: companyFile },
      );
      expect(all.file.comments.pageInfo).to.deep.equal({ hasNextPage: false, endCursor: null });
      expect(all.file.comments.nodes.map((c: Record<string, any>) => asRest(companyFile, c))).to.deep.equal(
        rest.body.data,
      );
      expect(all.file.comments.nodes[0]).to.deep.include({ body: 'first', version: 1, editedAt: null });
      expect(all.file.comments.nodes[0].updatedAt).to.be.a('string');

      // page by page with GraphQL cursors, then the same cursor on REST, and a REST cursor on GraphQL
      const first = await data(
        a.adminToken,
        `query($f: ID!) { file(id: $f) { comments(first: 2) { nodes { id } pageInfo { hasNextPage endCursor } } } }`,
        { f: companyFile },
      );
      expect(first.file.comments.nodes.map((c: { id: string }) => c.id)).to.deep.equal(
        rest.body.data.slice(0, 2).map((c: { id: string }) => c.id),
      );
      expect(first.file.comments.pageInfo.hasNextPage).to.equal(true);
      const cursor = first.file.comments.pageInfo.endCursor as string;
      const restNext = await call('GET', `/files/${companyFile}/comments?limit=2&cursor=${cursor}`, {
        token: a.adminToken,
      });
      expect(restNext.status, restNext.text).to.equal(200);
      expect(restNext.body.data.map((c: { id: string }) => c.id)).to.deep.equal(
        rest.body.data.slice(2, 4).map((c: { id: string }) => c.id),
      );
      const viaRest = await data(
        a.adminToken,
        `query($f: ID!, $c: String) { file(id: $f) { comments(first: 2, after: $c) { nodes { id } } } }`,
        { f: companyFile, c: restNext.body.meta.nextCursor },
      );
      expect(viaRest.file.comments.nodes.map((c: { id: string }) => c.id)).to.deep.equal([
        rest.body.data[4].id,
      ]);
      // a cursor is bound to its file and to the company
      const wrongFile = await gql(
        a.adminToken,
        `query($f: ID!, $c: String) { file(id: $f) { comments(after: $c) { nodes { id } } } }`,
        { f: adminPrivate, c: cursor },
      );
      expect(wrongFile.body.errors[0].message).to.equal('after is not a valid cursor for this list');
      expect(wrongFile.body.errors[0].extensions.code).to.equal('BAD_REQUEST');
    });

    it('file → comments → author: employees see the name and role of others only, as Person does', async () => {
      const d = await data(
        a.employeeToken,
        `{ files(first: 10) { nodes { id comments(first: 10) { nodes { body author { id name role email status } } } } } }`,
      );
      const file = d.files.nodes.find((f: { id: string }) => f.id === companyFile);
      const [mine, theirs] = file.comments.nodes;
      expect(mine.author).to.deep.include({ id: a.employee.id, role: 'employee', email: a.employee.email });
      expect(theirs.author).to.deep.equal({
        id: a.admin.id,
        name: 'Test Person',
        role: 'admin',
        email: null,
        status: null,
      });
      // the admin sees the employee's full record
      const admin = await data(
        a.adminToken,
        `query($f: ID!) { file(id: $f) { comments(first: 1) { nodes { author { email status } file { id } } } } }`,
        { f: companyFile },
      );
      expect(admin.file.comments.nodes[0]).to.deep.equal({
        author: { email: a.employee.email, status: 'active' },
        file: { id: companyFile },
      });
    });

    it('never reaches the comments of a private file of another person, nor another company’s', async () => {
      const d = await data(
        a.employeeToken,
        `query($p: ID!, $o: ID!) {
           private: file(id: $p) { comments { nodes { id } } }
           other: file(id: $o) { comments { nodes { id } } }
           files(first: 100) { nodes { id comments { nodes { body } } } }
         }`,
        { p: adminPrivate, o: otherFile },
      );
      expect(d.private).to.equal(null);
      expect(d.other).to.equal(null);
      expect(d.files.nodes.map((f: { id: string }) => f.id)).to.not.include(adminPrivate);
      const bodies = d.files.nodes.flatMap((f: any) => f.comments.nodes.map((c: any) => c.body));
      expect(bodies).to.not.include('a private note');
      expect(bodies).to.not.include('in company b');
      // the admin who owns it sees its comment
      const owner = await data(
        a.adminToken,
        `query($p: ID!) { file(id: $p) { comments { nodes { body } } } }`,
        { p: adminPrivate },
      );
      expect(owner.file.comments.nodes).to.deep.equal([{ body: 'a private note' }]);
      // the batch read behind the loader checks visibility itself: asked directly for the private file
      // (and another company's), it answers nothing for the employee and the private comment for the admin
      const { appKnex } = testEnv();
      const asEmployee = { companyId: a.company.id, personId: a.employee.id, role: 'employee' as const };
      const asAdmin = { ...asEmployee, personId: a.admin.id, role: 'admin' as const };
      const ids = [adminPrivate, otherFile, companyFile];
      const seen = await actingAs({ companyId: a.company.id }, () =>
        commentsOfFiles(asEmployee, appKnex, ids, { limit: 20 }),
      );
      expect(seen.get(adminPrivate)).to.deep.equal([]);
      expect(seen.get(otherFile)).to.deep.equal([]);
      expect(seen.get(companyFile)).to.have.length(5);
      const byAdmin = await actingAs({ companyId: a.company.id }, () =>
        commentsOfFiles(asAdmin, appKnex, ids, { limit: 20 }),
      );
      expect(byAdmin.get(adminPrivate)?.map((c) => c.body)).to.deep.equal(['a private note']);
      expect(byAdmin.get(otherFile)).to.deep.equal([]);
    });
  });

  describe('notifications', () => {
    const QUERY = `query($first: Int, $after: String, $unread: Boolean) {
      notifications(first: $first, after: $after, unread: $unread) {
        nodes { id kind resource { type id } data read readAt createdAt }
        pageInfo { hasNextPage endCursor }
      }
      unreadNotificationCount
    }`;

    it('the caller’s own, newest first, unread ones and their count, as REST, with interchangeable cursors', async () => {
      // the employee's comment notified the admin (comment.on_your_file); mark one read to tell unread apart
      const rest = await call('GET', '/notifications?limit=100', { token: a.adminToken });
      expect(rest.status, rest.text).to.equal(200);
      expect(rest.body.data.length).to.be.greaterThan(0);
      const d = await data(a.adminToken, QUERY, { first: 100 });
      expect(d.notifications.nodes).to.deep.equal(rest.body.data);
      expect(d.notifications.nodes[0]).to.deep.include({ kind: 'comment.on_your_file', read: false });
      const count = await call('GET', '/notifications/unread-count', { token: a.adminToken });
      expect(d.unreadNotificationCount).to.equal(count.body.unread);

      // a second notification, then one read: the unread list and count follow
      await comment(a.employeeToken, companyFile, 'second');
      const both = await data(a.adminToken, QUERY, { first: 1 });
      expect(both.notifications.pageInfo.hasNextPage).to.equal(true);
      const read = await call('POST', `/notifications/${both.notifications.nodes[0].id}/read`, {
        token: a.adminToken,
      });
      expect(read.status, read.text).to.equal(200);
      const unread = await data(a.adminToken, QUERY, { unread: true });
      const restUnread = await call('GET', '/notifications?unread=true', { token: a.adminToken });
      expect(unread.notifications.nodes).to.deep.equal(restUnread.body.data);
      expect(unread.notifications.nodes.every((n: { read: boolean }) => !n.read)).to.equal(true);
      const restCount = await call('GET', '/notifications/unread-count', { token: a.adminToken });
      expect(unread.unreadNotificationCount).to.equal(restCount.body.unread);
      expect(unread.unreadNotificationCount).to.equal(unread.notifications.nodes.length);

      // cursors both ways
      const page1 = await data(a.adminToken, QUERY, { first: 1 });
      const restPage2 = await call(
        'GET',
        `/notifications?limit=1&cursor=${page1.notifications.pageInfo.endCursor}`,
        { token: a.adminToken },
      );
      expect(restPage2.status, restPage2.text).to.equal(200);
      const restPage1 = await call('GET', '/notifications?limit=1', { token: a.adminToken });
      const page2 = await data(a.adminToken, QUERY, {
        first: 1,
        after: restPage1.body.meta.nextCursor,
      });
      expect(page2.notifications.nodes).to.deep.equal(restPage2.body.data);
      // a cursor of the whole list is refused by the unread list
      const mixed = await gql(a.adminToken, QUERY, {
        unread: true,
        after: page1.notifications.pageInfo.endCursor,
      });
      expect(mixed.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });

    it('never shows another person’s or another company’s notifications', async () => {
      const admin = await data(a.adminToken, QUERY, { first: 100 });
      const mine = await data(a.employeeToken, QUERY, { first: 100 });
      const other = await data(b.adminToken, QUERY, { first: 100 });
      const adminIds = admin.notifications.nodes.map((n: { id: string }) => n.id);
      expect(adminIds.length).to.be.greaterThan(0);
      for (const d of [mine, other]) {
        const ids = d.notifications.nodes.map((n: { id: string }) => n.id);
        expect(ids.filter((id: string) => adminIds.includes(id))).to.deep.equal([]);
      }
      // company B's admin was notified of B's employee comment only
      expect(other.notifications.nodes.map((n: any) => n.data.fileId)).to.deep.equal([otherFile]);
      expect(other.unreadNotificationCount).to.equal(1);
      // A's cursor is refused in B
      const page = await data(a.adminToken, QUERY, { first: 1 });
      const foreign = await gql(b.adminToken, QUERY, { after: page.notifications.pageInfo.endCursor });
      expect(foreign.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });
  });

  describe('audit log', () => {
    const QUERY = `query($first: Int, $after: String, $action: String, $actorId: ID, $resourceId: String, $from: String) {
      auditLog(first: $first, after: $after, action: $action, actorId: $actorId, resourceId: $resourceId, from: $from) {
        nodes {
          id time action outcome correlationId clientAddress changes
          actor { type personId apiKeyId keyPrefix } resource { type id }
        }
        pageInfo { hasNextPage endCursor }
      }
    }`;

    it('admins: the same entries as GET /audit-log with its filters, and interchangeable cursors', async () => {
      const rest = await call('GET', '/audit-log?limit=100', { token: a.adminToken });
      expect(rest.status, rest.text).to.equal(200);
      const d = await data(a.adminToken, QUERY, { first: 100 });
      expect(d.auditLog.nodes).to.deep.equal(rest.body.data);
      expect(d.auditLog.nodes.map((e: { action: string }) => e.action)).to.include('comment.created');

      const filtered = await data(a.adminToken, QUERY, { action: 'comment.*', actorId: a.employee.id });
      const restFiltered = await call(
        'GET',
        `/audit-log?actorId=${a.employee.id}&action=${encodeURIComponent('comment.*')}`,
        { token: a.adminToken },
      );
      expect(filtered.auditLog.nodes).to.deep.equal(restFiltered.body.data);
      expect(filtered.auditLog.nodes.length).to.be.greaterThan(0);
      for (const e of filtered.auditLog.nodes) {
        expect(e.action).to.match(/^comment\./);
        expect(e.actor.personId).to.equal(a.employee.id);
      }

      // the actor's person, through the person loader
      const person = await data(
        a.adminToken,
        `query($p: ID!) { auditLog(first: 1, actorId: $p) { nodes { actor { person { id role } } } } }`,
        { p: a.employee.id },
      );
      expect(person.auditLog.nodes[0].actor.person).to.deep.equal({ id: a.employee.id, role: 'employee' });

      // cursors both ways (filters given in REST's order: actorId before action)
      const g1 = await data(a.adminToken, QUERY, { first: 1, action: 'comment.*', actorId: a.admin.id });
      const r2 = await call(
        'GET',
        `/audit-log?limit=1&actorId=${a.admin.id}&action=${encodeURIComponent('comment.*')}&cursor=${g1.auditLog.pageInfo.endCursor}`,
        { token: a.adminToken },
      );
      expect(r2.status, r2.text).to.equal(200);
      const r1 = await call(
        'GET',
        `/audit-log?limit=1&actorId=${a.admin.id}&action=${encodeURIComponent('comment.*')}`,
        { token: a.adminToken },
      );
      const g2 = await data(a.adminToken, QUERY, {
        first: 1,
        action: 'comment.*',
        actorId: a.admin.id,
        after: r1.body.meta.nextCursor,
      });
      expect(g2.auditLog.nodes).to.deep.equal(r2.body.data);
      // a cursor belongs to its filters
      const other = await gql(a.adminToken, QUERY, { after: g1.auditLog.pageInfo.endCursor });
      expect(other.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });

    it('checks the filters as REST does (400 BAD_REQUEST, no database error)', async () => {
      const bad: Array<Record<string, string>> = [
        { actorId: 'x' },
        { from: 'yesterday' },
        { resourceId: '' },
      ];
      for (const vars of bad) {
        const res = await gql(a.adminToken, QUERY, vars);
        expect(res.body.errors[0].extensions, JSON.stringify(vars)).to.deep.equal({
          code: 'BAD_REQUEST',
          statusCode: 400,
        });
        const rest = await call('GET', `/audit-log?${new URLSearchParams(vars).toString()}`, {
          token: a.adminToken,
        });
        expect(rest.status, JSON.stringify(vars)).to.equal(400);
      }
    });

    it('refuses employees (FORBIDDEN), and never shows another company’s entries', async () => {
      const res = await gql(a.employeeToken, QUERY, {});
      // the field alone is refused (null in its place), not the rest of the answer
      expect(res.body.data).to.deep.equal({ auditLog: null });
      expect(res.body.errors[0].path).to.deep.equal(['auditLog']);
      expect(res.body.errors[0].extensions).to.deep.equal({ code: 'FORBIDDEN', statusCode: 403 });
      const mine = await data(a.adminToken, QUERY, { first: 100 });
      const theirs = await data(b.adminToken, QUERY, { first: 100 });
      const ids = new Set(mine.auditLog.nodes.map((e: { id: string }) => e.id));
      expect(theirs.auditLog.nodes.length).to.be.greaterThan(0);
      for (const e of theirs.auditLog.nodes) {
        expect(ids.has(e.id)).to.equal(false);
        expect([b.admin.id, b.employee.id, null]).to.include(e.actor.personId);
      }
      // asking B's log for A's comments by resource finds nothing
      const a1 = mine.auditLog.nodes.find((e: { action: string }) => e.action === 'comment.created');
      const cross = await data(b.adminToken, QUERY, { resourceId: a1.resource.id });
      expect(cross.auditLog.nodes).to.deep.equal([]);
      const page = await data(a.adminToken, QUERY, { first: 1 });
      const foreign = await gql(b.adminToken, QUERY, { after: page.auditLog.pageInfo.endCursor });
      expect(foreign.body.errors[0].message).to.equal('after is not a valid cursor for this list');
    });
  });

  describe('query count', () => {
    /** N company-wide files with 3 comments each (two by the employee, one by the admin), inserted directly. */
    async function seedFiles(team: Team, n: number): Promise<void> {
      const { knex } = testEnv();
      for (let i = 0; i < n; i++) {
        const { fileId } = await insertCompanyFile(team, i, 1);
        await knex('comments').insert(
          [team.employee.id, team.admin.id, team.employee.id].map((author, k) => ({
            id: randomUUID(),
            companyId: team.company.id,
            fileId,
            authorPersonId: author,
            body: `comment ${k}`,
          })),
        );
      }
    }

    const QUERY = `{ files(first: 50) { nodes { id comments(first: 10) { nodes { id body createdAt author { id name role } } pageInfo { hasNextPage } } } } }`;

    async function countQueries(token: string): Promise<{ count: number; files: number }> {
      const { count, result: d } = await countAppQueries(() => data(token, QUERY));
      for (const f of d.files.nodes) {
        expect(f.comments.nodes.map((c: { body: string }) => c.body)).to.have.members([
          'comment 0',
          'comment 1',
          'comment 2',
        ]);
        for (const c of f.comments.nodes) expect(c.author.name).to.equal('Test Person');
      }
      return { count, files: d.files.nodes.length };
    }

    it('reads the comments (and authors) of 50 files in as many SQL statements as of 5', async () => {
      expect(testEnv().deps.knex).to.equal(testEnv().appKnex);
      const small = await createTeam();
      const large = await createTeam();
      await seedFiles(small, 5);
      await seedFiles(large, 50);
      await countQueries(small.employeeToken); // warm-up (first use of a pooled connection)
      const five = await countQueries(small.employeeToken);
      const fifty = await countQueries(large.employeeToken);
      expect(five.files).to.equal(5);
      expect(fifty.files).to.equal(50);
      // files, comments, people: one query each, plus the request's own (authentication, counting)
      expect(fifty.count, `5 files: ${five.count}, 50 files: ${fifty.count}`).to.equal(five.count);
      expect(fifty.count).to.be.at.most(10);
      console.log(`      (SQL statements: ${five.count} for 5 files, ${fifty.count} for 50)`);
    });
  });
});
