import type { Next } from 'koa';
import { PaymentRequiredError } from '../../common/errors';
import type { PlanName } from '../../common/plans';
import type { AppContext } from '../context';
import type { RouteSpec } from '../routing';

export const NO_PLAN_MESSAGE = 'choose a plan first (PATCH /subscriptions/me)';

/**
 * The company's plan, or 402 when it has not chosen one. For handlers whose need for a plan depends on the
 * request; routes that always need one set `needsPlan: true` instead.
 */
export function requirePlan(ctx: AppContext): PlanName {
  const plan = ctx.state.auth?.companyPlan;
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
