/**
 * The report build's analytics step: the quality score and the failed rules of a saved report go into the
 * company's daily rollups (analytics_daily) in the transaction that saves the report, so they count once
 * per build and only if the report is saved. (Uploads, report outcomes, comparisons, sensitive findings and
 * deliveries are counted by triggers: db/migrations/20261123001300_analytics.ts.)
 */
import type { BuildExtension } from '../reports/build';
import type { QualitySection } from '../rules/evaluate';

export function analyticsExtension(): BuildExtension {
  return {
    async prepare() {
      return {
        steps: [],
        async onSave({ trx }, saved) {
          const quality = saved.sections.quality as QualitySection | undefined;
          if (!quality) return;
          const bump = (metric: string, dimension: string, amount: number) =>
            trx.raw(`select analytics_bump(?, now(), ?, ?, ?)`, [saved.companyId, metric, dimension, amount]);
          if (quality.score !== null && quality.score !== undefined) {
            await bump('quality_score_sum', '', quality.score);
            await bump('quality_score_count', '', 1);
          }
          for (const rule of quality.rules ?? []) {
            if (rule.status === 'failed') await bump('rule_failed', rule.ruleId, 1);
          }
        },
      };
    },
  };
}
