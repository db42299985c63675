import type { Knex } from 'knex';
import { notify } from '../notifications/notify';
import type { TransactionOrKnex } from 'objection';
import { FileUsage } from '../../db/models';
import type { NewEvent } from '../../db/transaction';
import { QuotaExceededError } from './errors';
import { periodKey, planLimits, type PlanName } from './plans';

/** Uploads counted for the company in the billing period `key` (0 before the first). */
export async function filesUsed(db: TransactionOrKnex, companyId: string, key: string): Promise<number> {
  const usage = await FileUsage.scoped(companyId, db).where({ periodKey: key }).select('filesUsed').first();
  return Number(usage?.filesUsed ?? 0);
}

/**
 * Quick refusal before an upload reads its body when the quota is already used up (the upload's
 * transaction decides, through countUpload).
 */
export async function checkQuotaEarly(db: Knex, companyId: string, plan: PlanName): Promise<void> {
  const limits = planLimits(plan);
  if (limits.billsExcessFiles) return;
  const key = periodKey();
  if ((await filesUsed(db, companyId, key)) >= limits.filesPerPeriod) throw new QuotaExceededError(plan, key);
}

export const QUOTA_THRESHOLDS = [80, 100] as const;

export interface QuotaUse {
  periodKey: string;
  filesUsed: number;
  filesLimit: number;
  /** Premium: uploads over the quota, billed later */
  overQuota: boolean;
}

/**
 * Counts one upload (a new file or a new version) against the company's file quota for the current
 * billing period, inside the upload's transaction.
 *
 * The two writes stay statements of their own (an upsert whose answer tells whether it counted, and an
 * insert that tells whether it announced): the company comes from the caller's unit of work, and row-level
 * security refuses a row of another company. Reads of these tables go through `FileUsage.scoped`.
 *
 * One statement does the check and the increment: the row lock taken by INSERT … ON CONFLICT DO UPDATE
 * serialises concurrent uploads, and the WHERE makes the update a no-op at the limit, so two uploads at
 * the edge can never both pass. Free and Basic refuse at the limit (QuotaExceededError, 402 over HTTP); Premium keeps counting (billing
 * reads files_used over the quota). The 80% and 100% thresholds are announced once per period
 * (quota_notices holds the proof), through `emit` in the same transaction.
 */
export async function countUpload(
  trx: Knex.Transaction,
  params: { companyId: string; plan: PlanName; at?: Date },
  emit: (event: NewEvent) => Promise<string>,
): Promise<QuotaUse> {
  const limits = planLimits(params.plan);
  const key = periodKey(params.at);
  const limit = limits.filesPerPeriod;
  const guard = limits.billsExcessFiles ? '' : 'where file_usage.files_used < :limit';
  const result: unknown = await trx.raw(
    `insert into file_usage (company_id, period_key, files_used) values (:companyId, :key, 1)
     on conflict (company_id, period_key) do update set files_used = file_usage.files_used + 1
     ${guard}
     returning files_used`,
    { companyId: params.companyId, key, limit },
  );
  // raw results keep the database's column names (the mapper converts only the outer object)
  const row = (result as { rows: Array<{ files_used: number }> }).rows[0];
  if (!row) {
    throw new QuotaExceededError(params.plan, key);
  }
  const filesUsed = Number(row.files_used);
  for (const threshold of QUOTA_THRESHOLDS) {
    if (filesUsed * 100 < threshold * limit) continue;
    const inserted = (await trx('quotaNotices')
      .insert({
        companyId: params.companyId,
        periodKey: key,
        threshold,
        plan: params.plan,
        filesUsed,
        filesLimit: limit,
      })
      .onConflict(['companyId', 'periodKey', 'threshold'])
      .ignore()
      .returning('threshold')) as unknown[];
    if (inserted.length === 0) continue;
    await emit({
      companyId: params.companyId,
      type: 'quota.threshold',
      data: { threshold, plan: params.plan, periodKey: key, filesUsed, filesLimit: limit },
    });
    await notify(trx, {
      companyId: params.companyId,
      kind: 'quota.threshold',
      to: { admins: true },
      resource: { type: 'company', id: params.companyId },
      data: { threshold, periodKey: key, filesUsed, filesLimit: limit },
      cause: `quota:${key}:${threshold}`,
    });
  }
  return { periodKey: key, filesUsed, filesLimit: limit, overQuota: filesUsed > limit };
}
