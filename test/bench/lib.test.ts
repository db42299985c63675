/**
 * The benchmarks' run (bench/lib.ts): the service side acts as the worker does — the application role,
 * acting for one company — so their figures include row-level security; fixtures go through the owner.
 */
import { expect } from 'chai';
import { Model } from 'objection';
import { asWorker, seedCompany, startBenchRun, type BenchRun } from '../../bench/lib';
import { testEnv } from '../helpers/env';

describe('bench/lib: the benchmarks act as the worker', function () {
  this.timeout(120_000);
  let run: BenchRun | undefined;

  before(async () => {
    run = await startBenchRun();
  });
  after(async () => {
    await run?.close();
    // startBenchRun made its own knex objection's default: give the suite's back
    Model.knex(testEnv().appKnex);
  });

  it('runs the service side as the application role, under row-level security', async () => {
    const { knex, appKnex, config } = run!;
    const a = await seedCompany(knex);
    const b = await seedCompany(knex);
    const who = await asWorker(a.companyId, () => appKnex.raw('select current_user as role'));
    expect(who.rows[0].role).to.equal(config.databaseAppRole);
    const seen = await asWorker(a.companyId, () => appKnex('people').select('companyId'));
    expect(seen.map((p: { companyId: string }) => p.companyId)).to.deep.equal([a.companyId]);
    // the owner's connection (fixtures) sees both
    expect(await knex('people').whereIn('companyId', [a.companyId, b.companyId])).to.have.length(2);
  });
});
