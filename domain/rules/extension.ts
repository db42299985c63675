/**
 * Quality rules in the report build: the company's rules are read when the build starts (a rule changed
 * during a build counts from the next one), evaluated by the `quality` step in the same pass as the
 * profile, and `rules.failed` is written in the transaction that saves the report — once per build, when
 * at least one `error` rule failed.
 */
import { transact, type TransactOptions } from '../../db/transaction';
import type { BuildExtension } from '../reports/build';
import { rulesStep, type QualitySection } from './evaluate';
import { rulesForBuild } from './queries';

export function qualityExtension(): BuildExtension {
  return {
    async prepare(knex, req) {
      // one unit of work acting for the build's company (`acting` is read by the row-level-security unit of
      // work of branch rls; without it the option is ignored)
      const options = { correlationId: req.correlationId, acting: { companyId: req.companyId } } as TransactOptions;
      const rules = await transact(knex, ({ trx }) => rulesForBuild(trx, req.companyId, req.fileId), options);
      return {
        steps: [rulesStep(rules)],
        async onSave({ emit }, saved) {
          const quality = saved.sections.quality as QualitySection | undefined;
          if (!quality || quality.failedErrorRules === 0) return;
          await emit({
            companyId: saved.companyId,
            type: 'rules.failed',
            data: {
              fileId: saved.fileId,
              failedRuleCount: quality.failedErrorRules,
              qualityScore: quality.score,
              version: saved.version,
            },
          });
        },
      };
    },
  };
}
