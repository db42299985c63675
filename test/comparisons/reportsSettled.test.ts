/**
 * When a queued comparison stops waiting for its versions' reports (domain/comparisons/run.ts
 * reportsSettled, polled by the comparison workflow): a report queued or building holds it, and so does a
 * version uploaded less than five minutes ago without its report row (its report workflow creates the row
 * first thing); ready, failed or no report row after that lets it go; a comparison no longer queued never
 * waits.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { reportsSettled } from '../../domain/comparisons/run';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { seedComparison } from './seed';

describe('comparisons: when the wait for reports ends', function () {
  this.timeout(120_000);

  it('queued or building holds it; ready, failed or none lets it go; a comparison not queued never waits', async () => {
    const { knex, appKnex } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    const { fileId, versionIds, comparisonId } = await seedComparison(team, ['id\n1\n', 'id\n2\n'], {
      reports: 'ready',
    });
    const versions = versionIds.map((id) => ({ id }));
    const report = (i: number) => knex('reports').where({ fileVersionId: versions[i].id });
    const settled = () => reportsSettled(appKnex, team.company.id, comparisonId);

    const cases: Array<[string, string, boolean]> = [
      ['queued', 'ready', false],
      ['ready', 'building', false],
      ['building', 'failed', false],
      ['ready', 'ready', true],
      ['failed', 'ready', true],
      ['failed', 'failed', true],
    ];
    for (const [base, target, expected] of cases) {
      await report(0).update({ status: base });
      await report(1).update({ status: target });
      expect(await settled(), `base ${base}, target ${target}`).to.equal(expected);
    }
    // no report row for a version uploaded moments ago: its report workflow (started with the comparison's, by
    // the upload) has not created it yet — wait for it
    await report(0).update({ status: 'ready' });
    await report(1).delete();
    expect(await settled(), 'target just uploaded, its report row not there yet').to.equal(false);
    await report(0).delete();
    expect(await settled(), 'neither report row there yet').to.equal(false);
    // …but not for ever: five minutes after its upload a version without a report row (its report start
    // lost: the file sweep starts it again) no longer holds a comparison
    const uploadedAgo = (i: number, minutes: number) =>
      knex('fileVersions')
        .where({ id: versions[i].id })
        .update({ createdAt: knex.raw(`now() - make_interval(mins => ?)`, [minutes]) });
    await uploadedAgo(0, 6);
    expect(await settled(), 'base uploaded long ago, target just uploaded').to.equal(false);
    await uploadedAgo(1, 4);
    expect(await settled(), 'target uploaded four minutes ago').to.equal(false);
    await uploadedAgo(1, 6);
    expect(await settled(), 'no reports, both versions uploaded long ago').to.equal(true);
    // a comparison already comparing (or ended) does not wait, whatever its reports
    await knex('reports').insert({
      id: randomUUID(),
      companyId: team.company.id,
      fileId,
      fileVersionId: versions[0].id,
      version: 1,
      status: 'building',
      build: 2,
    });
    expect(await settled(), 'a report building again').to.equal(false);
    await knex('comparisons').where({ id: comparisonId }).update({ status: 'comparing' });
    expect(await settled(), 'comparison already comparing').to.equal(true);
    // another company's caller sees no comparison: nothing to wait for, nothing revealed
    const other = await createTeam({ plan: 'premium' });
    await knex('comparisons').where({ id: comparisonId }).update({ status: 'queued' });
    expect(await reportsSettled(appKnex, other.company.id, comparisonId)).to.equal(true);
    expect(await settled()).to.equal(false);
  });
});
