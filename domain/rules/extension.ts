/**
 * Quality rules in the report build: the company's rules are read when the build starts (a rule changed
 * during a build counts from the next one), evaluated by the `quality` step in the same pass as the
 * profile, and `rules.failed` is written in the transaction that saves the report — once per build, when
 * at least one `error` rule failed.
 */
import type { BuildExtension } from '../reports/build';
import { withCompany } from '../../db/unitOfWork';
import { notify } from '../notifications/notify';
import { rulesStep, type QualitySection } from './evaluate';
import { rulesForBuild } from './queries';

export function qualityExtension(): BuildExtension {
  return {
    async prepare(knex, req) {
      // read like every query of the build: in a transaction acting for the build's company
      const rules = await withCompany(knex, req.companyId, async (trx) =>
        rulesForBuild(trx, req.companyId, req.fileId),
      );
      return {
        steps: [rulesStep(rules)],
        async onSave(uow, saved) {
          const quality = saved.sections.quality as QualitySection | undefined;
          if (!quality || quality.failedErrorRules === 0) return;
          await uow.emit({
            companyId: saved.companyId,
            type: 'rules.failed',
            data: {
              fileId: saved.fileId,
              failedRuleCount: quality.failedErrorRules,
              qualityScore: quality.score,
              version: saved.version,
            },
          });
          await notify(uow, {
            companyId: saved.companyId,
            kind: 'rules.failed',
            to: { people: [saved.uploadedByPersonId] },
            resource: { type: 'file', id: saved.fileId },
            data: {
              fileId: saved.fileId,
              version: saved.version,
              failedRuleCount: quality.failedErrorRules,
              qualityScore: quality.score,
            },
            cause: `report:${saved.reportId}:build-${saved.build}:rules_failed`,
          });
        },
      };
    },
  };
}
