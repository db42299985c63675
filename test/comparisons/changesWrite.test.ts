/**
 * A comparison's row changes are written in batches, each under one lock on the comparison's row (migration
 * 20261123001410: no per-row foreign keys). A comparison deleted while its changes are being written (its file
 * deleted) ends as `file_deleted` and leaves no change behind; deleting a comparison deletes its changes.
 */
import { expect } from 'chai';
import ExcelJS from 'exceljs';
import type { Knex } from 'knex';
import { actingStatement } from '../../db/unitOfWork';
import { failComparison } from '../../domain/comparisons/run';
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

/** a trigger (this run's database only) that makes PostgreSQL refuse the change `seq` of `comparisonId` */
async function failInsertsOf(knex: Knex, comparisonId: string, seq: number) {
  await knex.raw(`create or replace function test_fail_change() returns trigger language plpgsql as $$
    begin raise exception 'injected: change refused'; end $$`);
  await knex.raw(
    `create trigger test_fail_change before insert on comparison_changes for each row
       when (new.comparison_id = '${comparisonId}'::uuid and new.seq = ${seq})
       execute function test_fail_change()`,
  );
}

async function dropFailures(knex: Knex) {
  await knex.raw(`drop trigger if exists test_fail_change on comparison_changes`);
}

/** a ready comparison: `n` changes, changeCount n, numbered 1..n */
async function expectExactlyChangeCount(knex: Knex, comparisonId: string, n: number) {
  const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
    status: string;
    changeCount: number;
  };
  expect(row.status).to.equal('ready');
  expect(Number(row.changeCount)).to.equal(n);
  const seqs = (await knex('comparisonChanges')
    .where({ comparisonId })
    .orderBy('seq')
    .pluck('seq')) as number[];
  expect(seqs).to.deep.equal(Array.from({ length: n }, (_, i) => i + 1));
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

  it('a batch whose INSERT fails fails the run; the retry starts clean and saves every change, numbered 1..n', async () => {
    const { knex } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    // a workbook of two sheets: the first one's 600 changes fill one batch (written while the second sheet
    // is compared) and leave 88 for the end; the second sheet has no change
    const book = async (v: number) => {
      const wb = new ExcelJS.Workbook();
      const a = wb.addWorksheet('A');
      a.addRow(['id', 'name', 'qty']);
      for (let i = 0; i < 600; i++) a.addRow([String(i + 1), `name ${i}`, String(i * 10 + v)]);
      const b = wb.addWorksheet('B');
      b.addRow(['id', 'x', 'y', 'z']);
      for (let i = 0; i < 5000; i++) b.addRow([String(i + 1), `x ${i}`, String(i), `z ${i % 7}`]);
      return Buffer.from(await wb.xlsx.writeBuffer());
    };
    const { comparisonId, run } = await seedComparison(team, [await book(1), await book(2)], {
      format: 'xlsx',
      keyColumns: ['id'],
    });
    // PostgreSQL refuses the first batch (at its first row)
    await failInsertsOf(knex, comparisonId, 1);
    try {
      const failed = await run().then(
        (o) => ({ resolved: o }),
        (err: unknown) => ({ rejected: err }),
      );
      expect(failed, 'the run with a failed batch').to.have.property('rejected');
    } finally {
      await dropFailures(knex);
    }
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as { status: string };
    expect(row.status).to.equal('comparing');
    // the activity's retry: from a clean slate, every change once
    expect(await run()).to.deep.equal({ status: 'ready', comparisonId });
    await expectExactlyChangeCount(knex, comparisonId, 600);
  });

  it('changes lost after being written (a row short): not saved ready; the retry saves every change', async () => {
    const { knex } = testEnv();
    const { comparisonId, run } = await requested(1000);
    // every INSERT of the comparison's changes succeeds, but the change numbered 700 disappears at once
    await knex.raw(`create or replace function test_lose_change() returns trigger language plpgsql as $$
      begin delete from comparison_changes where comparison_id = new.comparison_id and seq = new.seq;
      return null; end $$`);
    await knex.raw(
      `create trigger test_lose_change after insert on comparison_changes for each row
         when (new.comparison_id = '${comparisonId}'::uuid and new.seq = 700)
         execute function test_lose_change()`,
    );
    try {
      const lost = await run().then(
        (o) => ({ resolved: o }),
        (err: unknown) => ({ rejected: err }),
      );
      expect(lost, 'the run that lost a change').to.have.property('rejected');
      expect(String((lost as { rejected: Error }).rejected.message)).to.equal(
        '999 changes were written of the 1000 found',
      );
    } finally {
      await knex.raw(`drop trigger if exists test_lose_change on comparison_changes`);
    }
    expect(await run()).to.deep.equal({ status: 'ready', comparisonId });
    await expectExactlyChangeCount(knex, comparisonId, 1000);
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

  it('both versions refused: each is loaded again the checked way, from its download', async () => {
    const { knex, storage } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const { comparisonId, run } = await seedComparison(
      team,
      ['id,name\n1,"an\nn"\n2,bob\n', 'id,name\n1,"an\nn"\n2,bobby\n'],
      { reports: 'built' },
    );
    const reads = new Map<string, number>();
    const counting = Object.create(storage.client) as typeof storage.client;
    counting.getObject = ((bucket: string, key: string) => {
      reads.set(key, (reads.get(key) ?? 0) + 1);
      return storage.client.getObject(bucket, key);
    }) as typeof storage.client.getObject;
    expect(await run({ ...storage, client: counting })).to.deep.equal({ status: 'ready', comparisonId });
    const row = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      result: { changed: number; unchanged: number; added: number; removed: number };
    };
    expect(row.result).to.deep.include({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    const changes = (await knex('comparisonChanges').where({ comparisonId })) as Array<{ columns: unknown }>;
    expect(changes.map((c) => c.columns)).to.deep.equal([[{ column: 'name', old: 'bob', new: 'bobby' }]]);
    expect([...reads.values()]).to.deep.equal([1, 1]);
  });
});

describe('comparison: failing it deletes its changes in the same transaction', function () {
  this.timeout(60_000);

  it('a failure between marking it failed and deleting its changes leaves neither; the retry does both', async () => {
    const { knex, appKnex } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const { companyId, comparisonId } = await seedComparison(team, versions(3));
    // an attempt that wrote some changes, then failed for good
    await knex('comparisons').where({ id: comparisonId }).update({ status: 'comparing' });
    await knex('comparisonChanges').insert(
      [1, 2, 3].map((seq) => ({ comparisonId, companyId, seq, sheet: 'CSV', kind: 'added' })),
    );
    // PostgreSQL refuses to delete them once (the worker dies there, say)
    await knex.raw(`create or replace function test_fail_delete() returns trigger language plpgsql as $$
      begin raise exception 'injected: delete refused'; end $$`);
    await knex.raw(
      `create trigger test_fail_delete before delete on comparison_changes for each row
         when (old.comparison_id = '${comparisonId}'::uuid) execute function test_fail_delete()`,
    );
    const fail = () =>
      actingStatement({ companyId }, () =>
        failComparison(appKnex, { companyId, comparisonId }, comparisonId, 'internal_error', 'it failed'),
      );
    try {
      const first = await fail().then(
        () => 'resolved',
        () => 'rejected',
      );
      expect(first).to.equal('rejected');
    } finally {
      await knex.raw(`drop trigger if exists test_fail_delete on comparison_changes`);
    }
    // nothing changed: still comparing, its changes still there (the bookkeeping activity is retried)
    const before = (await knex('comparisons').where({ id: comparisonId }).first()) as { status: string };
    expect(before.status).to.equal('comparing');
    expect(await fail()).to.deep.equal({ status: 'failed' });
    const after = (await knex('comparisons').where({ id: comparisonId }).first()) as {
      status: string;
      failureReason: string;
    };
    expect([after.status, after.failureReason]).to.deep.equal(['failed', 'internal_error']);
    expect(await knex('comparisonChanges').where({ comparisonId })).to.deep.equal([]);
  });
});
