/**
 * Notifications through HTTP (issue 15 item 2): one's own only (another person's is 404, another company
 * sees nothing), newest first with stable cursors, `unread=true`, the unread count, marking one or all
 * read; keys need notifications:read and read their owner's.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createApiKey, createTeam, createTeamAndOther, type Team } from '../helpers/factories';
import { testEnv } from '../helpers/env';
import { call, expectErrorBody } from '../helpers/http';

/** Inserts notifications for a person, oldest first, one second apart; answers their ids. */
async function seed(
  companyId: string,
  personId: string,
  count: number,
  base = Date.now() - 3600_000,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    ids.push(id);
    await testEnv()
      .knex('notifications')
      .insert({
        id,
        companyId,
        personId,
        kind: 'quota.threshold',
        resourceType: 'company',
        resourceId: companyId,
        data: JSON.stringify({ threshold: 80, periodKey: '2026-11', filesUsed: i, filesLimit: 10 }),
        dedupeKey: `test:${id}`,
        createdAt: new Date(base + i * 1000),
      });
  }
  return ids;
}

describe('notifications', function () {
  this.timeout(60_000);
  let team: Team;
  let other: Team;

  before(async () => {
    ({ team, other } = await createTeamAndOther());
  });

  it('lists one’s own, newest first, with cursors stable while new ones arrive; the fields as documented', async () => {
    const ids = await seed(team.company.id, team.employee.id, 7);
    await seed(team.company.id, team.admin.id, 3);
    await seed(other.company.id, other.employee.id, 3);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 6; page++) {
      const res = await call('GET', `/notifications?limit=3${cursor ? `&cursor=${cursor}` : ''}`, {
        token: team.employeeToken,
      });
      expect(res.status, res.text).to.equal(200);
      seen.push(...res.body.data.map((n: { id: string }) => n.id));
      if (page === 0) {
        expect(res.body.data[0]).to.deep.equal({
          id: ids[6],
          kind: 'quota.threshold',
          resource: { type: 'company', id: team.company.id },
          data: { threshold: 80, periodKey: '2026-11', filesUsed: 6, filesLimit: 10 },
          read: false,
          readAt: null,
          createdAt: res.body.data[0].createdAt,
        });
        // newer ones arriving meanwhile never shift the pages still to come
        await seed(team.company.id, team.employee.id, 2, Date.now());
      }
      if (!res.body.meta.hasMore) break;
      cursor = res.body.meta.nextCursor;
    }
    expect(seen).to.deep.equal([...ids].reverse());
    expectErrorBody(await call('GET', '/notifications?colour=red', { token: team.employeeToken }), 400);
  });

  it('unread=true, the unread count, marking one and all read; another person’s is 404', async () => {
    const t = await createTeam({ plan: 'premium' });
    const ids = await seed(t.company.id, t.employee.id, 4);
    const [theirs] = await seed(t.company.id, t.admin.id, 1);
    const [foreign] = await seed(other.company.id, other.employee.id, 1);
    const count = async () =>
      (await call('GET', '/notifications/unread-count', { token: t.employeeToken })).body.unread as number;
    expect(await count()).to.equal(4);
    const read = await call('POST', `/notifications/${ids[1]}/read`, { token: t.employeeToken, json: {} });
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.include({ id: ids[1], read: true });
    expect(read.body.readAt).to.be.a('string');
    // again: no change, same answer
    const again = await call('POST', `/notifications/${ids[1]}/read`, { token: t.employeeToken, json: {} });
    expect(again.body.readAt).to.equal(read.body.readAt);
    expect(await count()).to.equal(3);
    const unread = await call('GET', '/notifications?unread=true', { token: t.employeeToken });
    expect(unread.body.data.map((n: { id: string }) => n.id)).to.deep.equal([ids[3], ids[2], ids[0]]);
    for (const id of [theirs, foreign, randomUUID()]) {
      expectErrorBody(
        await call('POST', `/notifications/${id}/read`, { token: t.employeeToken, json: {} }),
        404,
      );
    }
    const all = await call('POST', '/notifications/read-all', { token: t.employeeToken, json: {} });
    expect(all.body).to.deep.equal({ marked: 3 });
    expect(await count()).to.equal(0);
    // nobody else's changed
    const admin = await call('GET', '/notifications/unread-count', { token: t.adminToken });
    expect(admin.body).to.deep.equal({ unread: 1 });
    const foreignRow = (await testEnv().knex('notifications').where({ id: foreign }).first()) as {
      readAt: Date | null;
    };
    expect(foreignRow.readAt).to.equal(null);
  });

  it('a key with notifications:read reads and marks its owner’s; without the scope 403', async () => {
    const t = await createTeam({ plan: 'premium' });
    const [id] = await seed(t.company.id, t.employee.id, 1);
    await seed(t.company.id, t.admin.id, 2);
    const key = await createApiKey(t.employee, ['notifications:read']);
    const list = await call('GET', '/notifications', { token: key });
    expect(list.body.data.map((n: { id: string }) => n.id)).to.deep.equal([id]);
    expect((await call('POST', `/notifications/${id}/read`, { token: key, json: {} })).status).to.equal(200);
    const without = await createApiKey(t.employee, ['files:read']);
    for (const [method, path] of [
      ['GET', '/notifications'],
      ['GET', '/notifications/unread-count'],
      ['POST', `/notifications/${id}/read`],
      ['POST', '/notifications/read-all'],
    ]) {
      expectErrorBody(
        await call(method, path, { token: without, json: method === 'POST' ? {} : undefined }),
        403,
      );
    }
  });
});
