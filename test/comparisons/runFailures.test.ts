/**
 * The comparison runner called directly: a workbook refused before it is read fails with the reason of the
 * limit it is over (README "Reports", failure reasons), the zip guards with `unsafe_workbook`.
 */
import { expect } from 'chai';
import { ComparisonFailure } from '../../domain/comparisons/run';
import { testEnv } from '../helpers/env';
import { createTeam } from '../helpers/factories';
import { xlsx } from '../helpers/files';
import { seedComparison } from './seed';

describe('comparison: a workbook refused before it is read', function () {
  this.timeout(60_000);

  it("a sheet that declares more rows or columns than the limits fails with that limit's reason", async () => {
    const { config } = testEnv();
    const team = await createTeam({ plan: 'premium' });
    // 3 data rows × 3 columns in each version (the sheet's dimension A1:C4)
    const { run } = await seedComparison(team, [await xlsx(3, 3), await xlsx(3, 3)], { format: 'xlsx' });
    async function failure(files: Partial<typeof config.files>): Promise<ComparisonFailure> {
      try {
        await run(undefined, { ...config, files: { ...config.files, ...files } });
      } catch (err) {
        expect(err).to.be.instanceOf(ComparisonFailure);
        return err as ComparisonFailure;
      }
      throw new Error('the comparison did not fail');
    }
    expect(await failure({ maxRows: 2 })).to.include({
      reason: 'too_many_rows',
      message: 'the base version (1): the sheet has 3 rows; at most 2 are accepted',
    });
    expect(await failure({ maxColumns: 2 })).to.include({
      reason: 'too_many_columns',
      message: 'the base version (1): the sheet has 3 columns; at most 2 are accepted',
    });
    expect(await failure({ xlsxMaxEntries: 2 })).to.include({ reason: 'unsafe_workbook' });
  });
});
