/**
 * Operators suspend and reactivate a company (README "Billing", scripts/company-status.ts). Suspended: every
 * request of its people and keys answers 403 from the next request (the authenticate middleware reads the
 * company's status afresh on every request), sign-in answers 403, its outbox events wait undelivered
 * (db/outbox.ts) and its deliveries already in workflows are held (domain/webhooks/hold.ts) until it is
 * reactivated. Audited, with the reason, in the same transaction.
 */
import type { Knex } from 'knex';
import { NotFoundError } from '../../common/errors';
import type { CompanyStatus } from '../../db/models';
import { recordAudit } from '../audit/record';

export async function setCompanyStatus(
  trx: Knex.Transaction,
  input: { companyId: string; status: CompanyStatus; reason: string; operator?: string },
): Promise<{ companyId: string; from: CompanyStatus; to: CompanyStatus; changed: boolean }> {
  const row = (await trx('companies').select('status').where('id', input.companyId).forUpdate().first()) as
    { status: CompanyStatus } | undefined;
  if (!row) throw new NotFoundError(`no company ${input.companyId}`);
  const changed = row.status !== input.status;
  if (changed) {
    await trx('companies')
      .where('id', input.companyId)
      .update({ status: input.status, updatedAt: trx.fn.now() });
    await recordAudit(trx, {
      companyId: input.companyId,
      personId: null,
      action: input.status === 'suspended' ? 'company.suspended' : 'company.reactivated',
      resourceType: 'company',
      resourceId: input.companyId,
      details: { from: row.status, to: input.status, reason: input.reason, operator: input.operator ?? null },
    });
  }
  return { companyId: input.companyId, from: row.status, to: input.status, changed };
}
