/**
 * A comparison's row changes are written in batches, each under one lock on the comparison's row (migration
 * 20261123001410: no per-row foreign keys). A comparison deleted while its changes are being written (its file
 * deleted) ends as `file_deleted` and leaves no change behind; deleting a comparison deletes its changes.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { eventually } from '../helpers/temporal';
import { seedComparison } from './seed';

/** `rows` rows, every one changed between the two versions (one change each) */
function versions(rows: number): [string, string] {
  const lines = (v: number) =>
    ['id,name,qty', ...Array.from({ length: rows }, (_, i) => `${i + 1},name ${i},${i * 10 + v}`)].join('\n');
  return [lines(1), lines(2)];
}

describe('comparison changes: written in batches under one lock on the comparison', function () {
  this.timeout(120_000);

  async function requested(rows: number) {
    const team = await createTeam({ plan: 'premium' });
    return seedComparison(team, versions(rows), { keyColumns: ['id'] });
  }

  const changesOf = async (knex: Knex, comparisonId: string) =>
    Number(
      ((await knex('comparisonChanges').where({ comparisonId }).count({ n: '*' }).first()) as { n: string })
        .n,
    );

  it('writes every change (several batches) and deleting the comparison deletes them', async () => {
    const { knex } = testEnv();
    const { comparisonId, run } = await requested(3000);
    expect(await run()).to.deep.equal({ status: 'ready', comparisonId });
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      result: { changed: number };
    };
    expect(row.result.changed).to.equal(3000);
    expect(await changesOf(knex, comparisonId)).to.equal(3000);
    await knex('comparisons').where({ id: comparisonId }).delete();
    expect(await changesOf(knex, comparisonId)).to.equal(0);
  });

  it('a comparison deleted while its changes wait to be written: file_deleted, no change left', async () => {
    const { knex } = testEnv();
    const { comparisonId, run } = await requested(3000);
    // another transaction locks the comparison's row as soon as the run has started: the run's first batch
    // of changes waits for it; that transaction deletes the row and commits
    const trx = await knex.transaction();
    let outcome: Awaited<ReturnType<typeof run>> | undefined;
    try {
      const running = run().then((o) => (outcome = o));
      await eventually(
        async () => {
          const r = (await trx('comparisons').where({ id: comparisonId }).first()) as { status: string };
          return r.status === 'comparing' || undefined;
        },
        { what: 'the comparison started', timeoutMs: 30_000, intervalMs: 5 },
      );
      await trx('comparisons').where({ id: comparisonId }).forUpdate().first();
      await trx('comparisons').where({ id: comparisonId }).delete();
      await trx.commit();
      await running;
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect(outcome).to.deep.equal({ status: 'file_deleted', comparisonId: null });
    expect(await changesOf(knex, comparisonId)).to.equal(0);
  });
});

describe('comparison: a version the strict reader refuses is loaded again from its download', function () {
  this.timeout(120_000);

  it('reads each object from MinIO once, the refused version included, and compares right', async () => {
    const { knex, storage } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const rest = '3,cy\n4,dee\n5,eve\n';
    // version 2: a line break inside quotes, plain bytes that DuckDB's strict parallel reader refuses; both
    // reports built, so the comparison takes their types and loads both versions unchecked
    const { comparisonId, run } = await seedComparison(
      team,
      [`id,name\n1,ann\n2,bob\n${rest}`, `id,name\n1,ann\n2,"bo\nb"\n${rest}`],
      { reports: 'built' },
    );
    // every object read through a counting client
    const reads = new Map<string, number>();
    const counting = Object.create(storage.client) as typeof storage.client;
    counting.getObject = ((bucket: string, key: string) => {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return storage.client.getObject(bucket, key);
    }) as typeof storage.client.getObject;
    const outcome = await run({ ...storage, client: counting });
    expect(outcome).to.deep.equal({ status: 'ready', comparisonId });
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      result: { changed: number; unchanged: number; added: number; removed: number };
    };
    expect(row.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 4 });
    expect([...reads.values()]).to.deep.equal([1, 1]);
  });
});
