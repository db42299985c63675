import type { Next } from 'koa';
import { requirePlan as planOrRefuse } from '../../domain/plans/errors';
import { NO_PLAN_MESSAGE, type PlanName } from '../../domain/plans/plans';
import type { AppContext, Principal } from '../context';
import type { RouteSpec } from '../routing';

export { NO_PLAN_MESSAGE };

/**
 * The company's plan, or 402 when it has not chosen one (PlanRequiredError). For handlers whose need for a
 * plan depends on the request; routes that always need one set `needsPlan: true` instead. Takes the
 * request's context or its principal (`ctx.state.auth`, whose plan authentication read afresh for this request).
 */
export function requirePlan(from: AppContext | Principal): PlanName {
  return planOrRefuse('state' in from ? from.state.auth?.companyPlan : from.companyPlan);
}

/** Route chain step (after authentication): `needsPlan: true` routes answer 402 until a plan is chosen. */
export function planGuard(spec: RouteSpec) {
  return async (ctx: AppContext, next: Next) => {
    if (spec.needsPlan) requirePlan(ctx);
    await next();
  };
}
