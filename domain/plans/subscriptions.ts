/**
 * The company's subscription: its plan (none until chosen), the plan's limits and the file quota used in the
 * current billing period; choosing or changing the plan (audited).
 */
import { NotFoundError } from '../../common/errors';
import { PLAN_NAMES, PLANS, periodBounds, periodKey, type PlanName } from './plans';
import { Company } from '../../db/models';
import { filesUsed } from './quota';
import type { UnitOfWork } from '../../db/transaction';
import type { Knex } from 'knex';
import { auditActor, recordAudit } from '../audit/record';

/** Who acts: the part of the API's principal the plans domain reads. */
export interface Actor {
  companyId: string;
  personId: string;
  apiKeyId?: string | null;
}

/** Every plan with its limits, cheapest first. */
export function listPlans() {
  return PLAN_NAMES.map((name) => ({ name, limits: { ...PLANS[name] } }));
}

/** The subscription of the company on `plan` (the plan the caller's company has, as read for the request). */
export async function subscriptionOf(db: Knex | Knex.Transaction, companyId: string, plan: PlanName | null) {
  const key = periodKey();
  const { start, end } = periodBounds(key);
  return {
    plan,
    limits: plan ? { ...PLANS[plan] } : null,
    periodKey: key,
    periodStart: start.toISOString(),
    periodEnd: end.toISOString(),
    filesUsed: await filesUsed(db, companyId, key),
    filesLimit: plan ? PLANS[plan].filesPerPeriod : null,
  };
}

/** Chooses or changes the plan (choosing the current plan changes nothing and writes no audit entry). */
export async function choosePlan(actor: Actor, uow: UnitOfWork, chosen: PlanName) {
  const { trx } = uow;
  const company = await Company.query(trx).findById(actor.companyId).forUpdate();
  if (!company) throw new NotFoundError();
  if (company.plan !== chosen) {
    await Company.query(trx).findById(actor.companyId).patch({ plan: chosen });
    await recordAudit(trx, {
      ...auditActor(actor, uow.correlationId),
      action: company.plan ? 'subscription.plan_changed' : 'subscription.plan_chosen',
      resourceType: 'subscription',
      resourceId: actor.companyId,
      details: { from: company.plan, to: chosen },
    });
  }
  return subscriptionOf(trx, actor.companyId, chosen);
}
