/**
 * Refusals of the plans capability, typed: the API maps them (api/middlewares/errors.ts) to 402 (quota,
 * no plan) and 409 (a count the plan caps); nothing below the adapters names an HTTP status.
 */
import { DomainError } from '../../common/errors';
import { NO_PLAN_MESSAGE, planLimits, type PlanName } from './plans';

/** The file quota of the billing period is used up (Free, Basic; Premium bills the excess instead). */
export class QuotaExceededError extends DomainError {
  constructor(
    readonly plan: PlanName,
    readonly periodKey: string,
  ) {
    super(
      `file quota reached: ${planLimits(plan).filesPerPeriod} files per billing period on the ${plan} plan (period ${periodKey}); upgrade the plan to upload more`,
    );
  }
}

/** The company has not chosen a plan yet, and the work needs one. */
export class PlanRequiredError extends DomainError {
  constructor() {
    super(NO_PLAN_MESSAGE);
  }
}

/** A count the plan caps is reached (e.g. versions per file); the message names the count and the plan. */
export class PlanLimitError extends DomainError {}

/** The company's plan, or PlanRequiredError when it has not chosen one. */
export function requirePlan(plan: PlanName | null | undefined): PlanName {
  if (!plan) throw new PlanRequiredError();
  return plan;
}
