/** The caller's company: read it, change its details (admins; the route table keeps keys out). */
import { Company } from '../../db/models';
import type { UnitOfWork } from '../../db/transaction';
import { recordAudit } from '../audit/record';
import type { Actor, CompanyRow, Db } from './access';

export async function companyOf(actor: Pick<Actor, 'companyId'>, db: Db): Promise<CompanyRow> {
  return (await Company.scoped(actor.companyId, db).first()) as CompanyRow;
}

export async function updateCompany(
  actor: Actor,
  uow: UnitOfWork,
  change: { name?: string },
): Promise<CompanyRow> {
  const { trx } = uow;
  // the model stamps updatedAt (BaseModel.$beforeUpdate)
  const [row] = (await Company.scoped(actor.companyId, trx).patch(change).returning('*')) as CompanyRow[];
  await recordAudit(trx, {
    companyId: actor.companyId,
    personId: actor.personId,
    action: 'company.updated',
    resourceType: 'company',
    resourceId: actor.companyId,
    correlationId: uow.correlationId,
    details: change,
  });
  return row;
}
