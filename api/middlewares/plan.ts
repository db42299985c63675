import type { Next } from 'koa';
import { PaymentRequiredError } from '../../common/errors';
import { NO_PLAN_MESSAGE, type PlanName } from '../../common/plans';
import type { AppContext, Principal } from '../context';
import type { RouteSpec } from '../routing';

export { NO_PLAN_MESSAGE };

/**
 * The company's plan, or 402 when it has not chosen one. For handlers whose need for a plan depends on the
 * request; routes that always need one set `needsPlan: true` instead. Takes the request's context or its
 * principal (`ctx.state.auth`, whose plan authentication read afresh for this request).
 */
export function requirePlan(from: AppContext | Principal): PlanName {
  const plan = 'state' in from ? from.state.auth?.companyPlan : from.companyPlan;
  if (!plan) throw new PaymentRequiredError(NO_PLAN_MESSAGE);
  return plan;
}

/** Route chain step (after authentication): `needsPlan: true` routes answer 402 until a plan is chosen. */
export function planGuard(spec: RouteSpec) {
  return async (ctx: AppContext, next: Next) => {
    if (spec.needsPlan) requirePlan(ctx);
    await next();
  };
}
