/**
 * The AI-agent endpoint's tools for comments, notifications and the audit log (issue 17 on issue 15): each
 * answers as its REST route for the same call and caller; marks made through a tool show through REST;
 * another person's notification and another company's file are not found, as in REST.
 */
import { expect } from 'chai';
import { createApiKey, createTeam } from '../helpers/factories';
import { csv, uploadFile } from '../helpers/files';
import { call, expectErrorBody } from '../helpers/http';
import { connectMcp, tool, toolError } from '../helpers/mcp';

/** A cursor page without the cursor's text (sealed with a random nonce: two answers never share it). */
function page(body: any): any {
  const nextCursor = body.meta.nextCursor === null ? null : 'a cursor';
  return { ...body, meta: { ...body.meta, nextCursor } };
}

/** A REST answer that must be 200. */
async function get(token: string, path: string): Promise<any> {
  const res = await call('GET', path, { token });
  expect(res.status, `${path}: ${res.text}`).to.equal(200);
  return res.body;
}

describe('AI-agent endpoint: comments, notifications and audit-log tools', function () {
  this.timeout(60_000);

  it('each tool answers as its REST route; marks through a tool show through REST; 404 as in REST', async () => {
    const team = await createTeam({ plan: 'premium' });
    const other = await createTeam({ plan: 'premium' });
    // the employee's file, commented on by the admin (a session: keys never write comments): the employee
    // hears of it (comment.on_your_file), twice
    const uploaded = await uploadFile(csv(3), { token: team.employeeToken, visibility: 'company' });
    expect(uploaded.status, uploaded.text).to.equal(201);
    const fileId = uploaded.body.id as string;
    for (const body of ['first look', 'second look']) {
      const res = await call('POST', `/files/${fileId}/comments`, {
        token: team.adminToken,
        json: { body, version: 1 },
      });
      expect(res.status, res.text).to.equal(201);
    }

    const reader = await createApiKey(team.employee, ['mcp', 'files:read', 'notifications:read']);
    const mcp = await connectMcp(reader);
    const auditor = await createApiKey(team.admin, ['mcp', 'audit:read']);
    const audit = await connectMcp(auditor);
    try {
      // comments: a page and the next one through the cursor
      // comments: a page and the next one, each side's cursor taken by the other
      const firstPage = await tool(mcp, 'list_comments', { id: fileId, limit: 1 });
      const restFirst = await get(reader, `/files/${fileId}/comments?limit=1`);
      expect(page(firstPage)).to.deep.equal(page(restFirst));
      expect(firstPage.data.map((c: { body: string }) => c.body)).to.deep.equal(['first look']);
      const cursor = firstPage.meta.nextCursor as string;
      expect(cursor).to.be.a('string');
      const secondPage = await tool(mcp, 'list_comments', {
        id: fileId,
        limit: 1,
        cursor: restFirst.meta.nextCursor,
      });
      expect(secondPage).to.deep.equal(
        await get(reader, `/files/${fileId}/comments?limit=1&cursor=${encodeURIComponent(cursor)}`),
      );
      expect(secondPage.data.map((c: { body: string }) => c.body)).to.deep.equal(['second look']);

      // notifications: the key's owner's own
      const all = await tool(mcp, 'list_notifications');
      expect(all).to.deep.equal(await get(reader, '/notifications'));
      expect(all.data.map((n: { kind: string }) => n.kind)).to.deep.equal([
        'comment.on_your_file',
        'comment.on_your_file',
      ]);
      expect(page(await tool(mcp, 'list_notifications', { unread: true, limit: 1 }))).to.deep.equal(
        page(await get(reader, '/notifications?unread=true&limit=1')),
      );
      const count = await tool(mcp, 'get_unread_notification_count');
      expect(count).to.deep.equal({ unread: 2 });
      expect(count).to.deep.equal(await get(reader, '/notifications/unread-count'));

      const [newest, oldest] = all.data as Array<{ id: string }>;
      const marked = await tool(mcp, 'mark_notification_read', { id: newest.id });
      expect(marked).to.include({ id: newest.id, read: true });
      const restNotifications = await get(reader, '/notifications');
      expect(restNotifications.data[0]).to.deep.equal(marked);
      expect(await get(reader, '/notifications/unread-count')).to.deep.equal({ unread: 1 });
      expect(await tool(mcp, 'list_notifications', { unread: true })).to.deep.equal(
        await get(reader, '/notifications?unread=true'),
      );
      // again: no change, as in REST
      expect(await tool(mcp, 'mark_notification_read', { id: newest.id })).to.deep.equal(marked);

      expect(await tool(mcp, 'mark_all_notifications_read')).to.deep.equal({ marked: 1 });
      expect(await get(reader, '/notifications/unread-count')).to.deep.equal({ unread: 0 });
      const readAll = await get(reader, '/notifications');
      expect(readAll.data.map((n: { id: string; read: boolean }) => [n.id, n.read])).to.deep.equal([
        [newest.id, true],
        [oldest.id, true],
      ]);
      // nothing left to mark: the tool answers as the REST route
      const restNone = await call('POST', '/notifications/read-all', { token: reader });
      expect(restNone.status, restNone.text).to.equal(200);
      expect(await tool(mcp, 'mark_all_notifications_read')).to.deep.equal(restNone.body);

      // another person's notification (the admin's own, from a comment of the employee on the admin's file)
      const adminsFile = await uploadFile(csv(2), { token: team.adminToken, visibility: 'company' });
      const onAdmins = await call('POST', `/files/${adminsFile.body.id}/comments`, {
        token: team.employeeToken,
        json: { body: 'a question' },
      });
      expect(onAdmins.status, onAdmins.text).to.equal(201);
      const adminsNotification = (await get(team.adminToken, '/notifications?unread=true')).data[0];
      expect(adminsNotification).to.include({ kind: 'comment.on_your_file' });
      const restOthers = await call('POST', `/notifications/${adminsNotification.id}/read`, {
        token: reader,
      });
      const { message: othersMessage } = expectErrorBody(restOthers, 404);
      expect(await toolError(mcp, 'mark_notification_read', { id: adminsNotification.id })).to.deep.include({
        statusCode: 404,
        message: othersMessage,
      });
      // still unread for its owner
      expect((await get(team.adminToken, `/notifications?unread=true`)).data[0]).to.deep.equal(
        adminsNotification,
      );

      // another company's file: its comments are not found
      const theirs = await uploadFile(csv(2), { token: other.adminToken, visibility: 'company' });
      const theirComment = await call('POST', `/files/${theirs.body.id}/comments`, {
        token: other.employeeToken,
        json: { body: 'theirs' },
      });
      expect(theirComment.status, theirComment.text).to.equal(201);
      const restTheirs = await call('GET', `/files/${theirs.body.id}/comments`, { token: reader });
      const { message: theirsMessage } = expectErrorBody(restTheirs, 404);
      expect(await toolError(mcp, 'list_comments', { id: theirs.body.id })).to.deep.include({
        statusCode: 404,
        message: theirsMessage,
      });

      // the audit log: the same filters, the same page (the marks above included, as the key's)
      const queries: Array<Record<string, string | number>> = [
        { action: 'comment.*', limit: 2 },
        { action: 'notification.*' },
        { resourceType: 'file', resourceId: fileId },
        {},
      ];
      for (const args of queries) {
        const search = new URLSearchParams(
          Object.entries(args).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString();
        const answer = await tool(audit, 'search_audit_log', args);
        const rest = await get(auditor, `/audit-log${search ? `?${search}` : ''}`);
        expect(page(answer), search).to.deep.equal(page(rest));
      }
      const commented = await tool(audit, 'search_audit_log', { action: 'comment.*' });
      expect(commented.data.length).to.be.greaterThan(0);
      expect(
        commented.data.every((e: { action: string; actor: { personId: string } }) =>
          e.action.startsWith('comment.'),
        ),
      ).to.equal(true);
      const marks = await tool(audit, 'search_audit_log', { action: 'notification.*' });
      expect(marks.data.length, JSON.stringify(marks)).to.be.greaterThan(0);
      expect(
        marks.data.every((e: { actor: { apiKeyId: string | null } }) => e.actor.apiKeyId !== null),
      ).to.equal(true);
      // a bad filter: REST's 400 message
      const restBad = await call('GET', '/audit-log?from=yesterday', { token: auditor });
      expect(await toolError(audit, 'search_audit_log', { from: 'yesterday' })).to.deep.include({
        statusCode: 400,
        message: expectErrorBody(restBad, 400).message,
      });
      // the other company's entries never show
      expect((await tool(audit, 'search_audit_log', { resourceId: theirs.body.id })).data).to.deep.equal([]);
    } finally {
      await mcp.close();
      await audit.close();
    }
  });

  it('keys without the scope are not offered the tools and get REST’s 403; an employee’s key never reads the audit log', async () => {
    const team = await createTeam({ plan: 'premium' });
    const filesOnly = await createApiKey(team.employee, ['mcp', 'files:read']);
    const mcp = await connectMcp(filesOnly);
    try {
      const names = (await mcp.client.listTools()).tools.map((t) => t.name);
      expect(names).to.include('list_comments');
      expect(names.filter((n) => /notification|audit/.test(n))).to.deep.equal([]);
      const rest = await call('GET', '/notifications', { token: filesOnly });
      expect(await toolError(mcp, 'list_notifications')).to.deep.include({
        statusCode: 403,
        message: expectErrorBody(rest, 403).message,
      });
    } finally {
      await mcp.close();
    }
    // audit:read on an employee's key: the route is for admins, so the tool is not offered and refused
    const employeeAudit = await createApiKey(team.employee, ['mcp', 'audit:read']);
    const refused = await connectMcp(employeeAudit);
    try {
      expect((await refused.client.listTools()).tools.map((t) => t.name)).to.deep.equal([]);
      const rest = await call('GET', '/audit-log', { token: employeeAudit });
      expect(await toolError(refused, 'search_audit_log')).to.deep.include({
        statusCode: 403,
        message: expectErrorBody(rest, 403).message,
      });
    } finally {
      await refused.close();
    }
  });
});
