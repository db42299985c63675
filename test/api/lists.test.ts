import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Cursors } from '../../api/lists';
import { apiClient } from '../helpers/client';
import { createApiKey, createTeam } from '../helpers/factories';
import { expectErrorBody } from '../helpers/http';
import { testEnv } from '../helpers/env';
import { platformTestRoutes, type PlatformTestRoutes } from '../helpers/platformRoutes';
import { startApp } from '../helpers/servers';

/** Audit rows for a company; `at` lets several share one created_at (the id breaks the tie). */
async function auditRows(companyId: string, count: number, at?: string): Promise<string[]> {
  const { knex } = testEnv();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    companyId,
    actorPersonId: null,
    action: `test.row_${i}`,
    resourceType: 'test',
    ...(at ? { createdAt: at } : {}),
  }));
  await knex('auditLog').insert(rows);
  return rows.map((r) => r.id);
}

describe('list envelopes', () => {
  describe('page numbers (GET /api-keys)', () => {
    it('pages newest first with page, limit, total and totalPages; another company sees none of it', async () => {
      const team = await createTeam();
      const other = await createTeam();
      for (let i = 0; i < 25; i++) await createApiKey(team.admin, ['files:read'], `key ${i}`);
      await createApiKey(other.admin, ['files:read'], 'not yours');
      const api = apiClient({ token: team.adminToken });
      const p1 = await api.get('/api-keys', { query: { limit: 10 } });
      const p3 = await api.get('/api-keys', { query: { limit: 10, page: 3 } });
      const p4 = await api.get('/api-keys', { query: { limit: 10, page: 4 } });
      expect(p1.body.meta).to.deep.equal({ page: 1, limit: 10, total: 25, totalPages: 3 });
      expect(p1.body.data.map((k) => k.name)).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => `key ${24 - i}`),
      );
      expect(p3.body.data.map((k) => k.name)).to.deep.equal(['key 4', 'key 3', 'key 2', 'key 1', 'key 0']);
      expect(p4.body).to.deep.equal({ data: [], meta: { page: 4, limit: 10, total: 25, totalPages: 3 } });
      const byDefault = await api.get('/api-keys');
      expect(byDefault.body.meta).to.deep.equal({ page: 1, limit: 20, total: 25, totalPages: 2 });
      const theirs = await apiClient({ token: other.adminToken }).get('/api-keys');
      expect(theirs.body.data.map((k) => k.name)).to.deep.equal(['not yours']);
    });

    it('limit 1 to 100 and page from 1; anything else, or an unknown parameter, is 400', async () => {
      const team = await createTeam();
      const api = apiClient({ token: team.adminToken });
      expect((await api.get('/api-keys', { query: { limit: 100 } })).status).to.equal(200);
      expect((await api.get('/api-keys', { query: { limit: 1 } })).status).to.equal(200);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ limit: 0 }, 'query.limit must be >= 1'],
        [{ limit: 101 }, 'query.limit must be <= 100'],
        [{ limit: 'ten' }, 'query.limit must be integer'],
        [{ page: 0 }, 'query.page must be >= 1'],
        [{ page: 1.5 }, 'query.page must be integer'],
        [{ cursor: 'x' }, 'unknown query parameter "cursor"'],
      ];
      for (const [query, message] of cases) {
        const res = await api.get('/api-keys', { query: query as never });
        expect(expectErrorBody(res, 400).message, JSON.stringify(query)).to.equal(message);
      }
    });
  });

  describe('cursors (over audit records)', () => {
    let baseUrl: string;
    before(async () => {
      baseUrl = (await startApp({ extraRoutes: platformTestRoutes })).baseUrl;
    });

    it('walks every row once, newest first, stable while rows are inserted, ties broken by id', async () => {
      const team = await createTeam();
      const { knex } = testEnv();
      await knex('auditLog').where({ companyId: team.company.id }).delete();
      const sameInstant = '2026-01-01T00:00:00.123456Z';
      await auditRows(team.company.id, 15, sameInstant);
      await auditRows(team.company.id, 20);
      const api = apiClient<PlatformTestRoutes>({ token: team.adminToken, baseUrl });
      const expected = (
        (await knex('auditLog')
          .where({ companyId: team.company.id })
          .orderBy([
            { column: 'createdAt', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .select('id')) as Array<{ id: string }>
      ).map((r) => r.id);
      expect(expected).to.have.length(35);

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await api.get('/_test/audit', { query: { limit: 8, ...(cursor ? { cursor } : {}) } });
        expect(res.status, res.text).to.equal(200);
        seen.push(...res.body.data.map((r) => r.id));
        // rows inserted meanwhile are newer: they never shift the pages still to come
        await auditRows(team.company.id, 2);
        if (!res.body.meta.hasMore) {
          expect(res.body.meta.nextCursor).to.equal(null);
          break;
        }
        cursor = res.body.meta.nextCursor!;
        expect(cursor).to.be.a('string');
      }
      expect(seen).to.deep.equal(expected);
    });

    it('defaults to 20, refuses limits out of range, and refuses tampered, foreign or other-list cursors', async () => {
      const team = await createTeam();
      const other = await createTeam();
      await auditRows(team.company.id, 25);
      await auditRows(other.company.id, 25);
      const api = apiClient<PlatformTestRoutes>({ token: team.adminToken, baseUrl });
      const first = await api.get('/_test/audit');
      expect(first.body.data).to.have.length(20);
      expect(first.body.meta.hasMore).to.equal(true);
      const cursor = first.body.meta.nextCursor!;
      // the cursor is opaque: nothing of the company or the position is readable in it
      expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.to.include(team.company.id);

      const invalid = 'query.cursor is not a valid cursor for this list';
      const flipped = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21);
      for (const bad of [flipped, cursor.slice(0, -2), 'not-a-cursor', cursor + 'AA']) {
        const res = await api.get('/_test/audit', { query: { cursor: bad } });
        expect(expectErrorBody(res, 400).message).to.equal(invalid);
      }
      // another tenant cannot use it (and learns nothing from it)
      const foreign = await apiClient<PlatformTestRoutes>({ token: other.adminToken, baseUrl }).get(
        '/_test/audit',
        { query: { cursor } },
      );
      expect(expectErrorBody(foreign, 400).message).to.equal(invalid);
      // a cursor of another list is refused too
      const cursors = new Cursors(testEnv().config.secretKey);
      const ofFiles = cursors.seal('files', team.company.id, {
        t: '2026-01-01T00:00:00.000000Z',
        i: randomUUID(),
      });
      expectErrorBody(await api.get('/_test/audit', { query: { cursor: ofFiles } }), 400);
      const rest = await api.get('/_test/audit', { query: { cursor } });
      expect(rest.status).to.equal(200);

      for (const limit of [0, 101]) {
        expectErrorBody(await api.get('/_test/audit', { query: { limit } }), 400);
      }
      expectErrorBody(await api.get('/_test/audit', { query: { page: 2 } as never }), 400);
    });
  });
});
