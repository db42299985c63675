/**
 * The migration that added `bytesStored` and `filesWithSensitiveData` (issue 18) counts the data that was
 * there before it: undone and applied again inside one transaction (rolled back at the end, so the run's
 * database is left as it was), with versions and findings written while it was undone.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as migration from '../../db/migrations/20261128000100_analytics_bytes_stored_sensitive_files';
import { testEnv } from '../helpers/env';

const DAY_MS = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS);
const day = (d: Date) => d.toISOString().slice(0, 10);

describe('analytics migration: bytes stored and files with sensitive data', () => {
  it('backfills both from existing versions and findings; the triggers count what follows', async () => {
    const trx = await testEnv().knex.transaction();
    try {
      await migration.down(trx);
      const companyId = randomUUID();
      const personId = randomUUID();
      await trx('companies').insert({ id: companyId, name: 'Backfill', plan: 'free' });
      const file = async (name: string) => {
        const f = { id: randomUUID(), datasetId: randomUUID() };
        await trx('files').insert({ ...f, companyId, originalName: name, uploadedByPersonId: personId });
        await trx('datasets').insert({ id: f.datasetId, companyId, fileId: f.id });
        return f;
      };
      const version = async (f: { id: string; datasetId: string }, n: number, size: number, at: Date) => {
        const id = randomUUID();
        await trx('fileVersions').insert({
          id,
          companyId,
          fileId: f.id,
          datasetId: f.datasetId,
          version: n,
          originalName: 'a.csv',
          format: 'csv',
          contentType: 'text/csv',
          sizeBytes: size,
          objectKey: `backfill/${id}`,
          uploadedByPersonId: personId,
          createdAt: at,
        });
        return id;
      };
      const finding = (fileId: string, fileVersionId: string, n: number) =>
        trx('sensitiveFindings').insert({
          id: randomUUID(),
          companyId,
          fileId,
          fileVersionId,
          version: n,
          columns: JSON.stringify([{ name: 'email', sheet: '', kinds: ['email'] }]),
        });
      const kept = await file('kept.csv');
      const v1 = await version(kept, 1, 100, daysAgo(3));
      const v2 = await version(kept, 2, 50, new Date());
      await finding(kept.id, v1, 1);
      await finding(kept.id, v2, 2);
      // deleted before the migration: gone from the base tables, so from the backfill
      const gone = await file('gone.csv');
      await version(gone, 1, 7, daysAgo(5));
      await trx('files').where({ id: gone.id }).delete();

      await migration.up(trx);
      // what GET /analytics reads (domain/analytics/series.ts): the day's change of the stored bytes, and
      // the (day, file) pairs with a finding
      const changes = async () =>
        (
          (await trx.raw(
            `select to_char(day, 'YYYY-MM-DD') d, value::float8 v from analytics_daily
             where company_id = ? and metric = 'bytes_stored_change' order by day`,
            [companyId],
          )) as { rows: Array<{ d: string; v: number }> }
        ).rows.map((r) => [r.d, r.v]);
      const flagged = async () =>
        (
          (await trx.raw(
            `select to_char(day, 'YYYY-MM-DD') d, file_id from analytics_sensitive_files where company_id = ?
             order by day, file_id`,
            [companyId],
          )) as { rows: Array<{ d: string; file_id: string }> }
        ).rows.map((r) => [r.d, r.file_id]);
      const today = day(new Date());
      expect(await changes()).to.deep.equal([
        [day(daysAgo(3)), 100],
        [today, 50],
      ]);
      expect(await flagged()).to.deep.equal([[today, kept.id]]);

      // after the migration the triggers count: a removed version leaves the figure on the day it goes
      await trx('fileVersions').where({ id: v2 }).delete();
      const other = await file('other.csv');
      await finding(other.id, await version(other, 1, 9, new Date()), 1);
      expect(await changes()).to.deep.equal([
        [day(daysAgo(3)), 100],
        [today, 9],
      ]);
      expect(await flagged()).to.deep.equal(
        [
          [today, kept.id],
          [today, other.id],
        ].sort((a, b) => a[1].localeCompare(b[1])),
      );
    } finally {
      await trx.rollback();
    }
  });
});
