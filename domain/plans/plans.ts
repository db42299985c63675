/**
 * Plans and their limits, in one place. The spec fixes the request budgets, the Free file quota and the
 * webhook endpoint limits; the rest are this service's choices (README "Plans and limits").
 * `null` means no limit.
 */
import { PLAN_NAMES, type PlanName } from '../../db/models/Company';

export { PLAN_NAMES, type PlanName };

export interface PlanLimits {
  /** API-key requests per minute, shared by every key of the company */
  requestsPerMinute: number;
  /** uploads (new files and new versions) per billing period */
  filesPerPeriod: number;
  /** over the file quota: false = refuse with 402; true = go on and bill the excess */
  billsExcessFiles: boolean;
  webhookEndpoints: number | null;
  people: number | null;
  rules: number | null;
  versionsPerFile: number | null;
  /** monthly price and price per file over quota, integer cents */
  monthlyPriceCents: number;
  excessFileCents: number;
}

export const PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: {
    requestsPerMinute: 30,
    filesPerPeriod: 10,
    billsExcessFiles: false,
    webhookEndpoints: 1,
    people: 3,
    rules: 5,
    versionsPerFile: 5,
    monthlyPriceCents: 0,
    excessFileCents: 0,
  },
  basic: {
    requestsPerMinute: 120,
    filesPerPeriod: 200,
    billsExcessFiles: false,
    webhookEndpoints: 5,
    people: 25,
    rules: 50,
    versionsPerFile: 50,
    monthlyPriceCents: 4900,
    excessFileCents: 0,
  },
  premium: {
    requestsPerMinute: 600,
    filesPerPeriod: 2000,
    billsExcessFiles: true,
    webhookEndpoints: null,
    people: null,
    rules: 500,
    versionsPerFile: 500,
    monthlyPriceCents: 19900,
    excessFileCents: 5,
  },
};

/** The answer (402) to work that needs a plan while the company has none. */
export const NO_PLAN_MESSAGE = 'choose a plan first (PATCH /subscriptions/me)';

export function planLimits(plan: PlanName): PlanLimits {
  return PLANS[plan];
}

/** Billing periods are calendar months in UTC; the key names the month, e.g. 2026-11. */
export function periodKey(at: Date = new Date()): string {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function periodBounds(key: string): { start: Date; end: Date } {
  const [y, m] = key.split('-').map(Number);
  return { start: new Date(Date.UTC(y, m - 1, 1)), end: new Date(Date.UTC(y, m, 1)) };
}

/** Requests per minute outside the plans' API-key budgets (spec "Limits"). */
export const REQUEST_BUDGETS = {
  /** a signed-in person (session token), per person */
  sessionPerPerson: 300,
  /** a request without sign-in, per client address */
  anonymousPerAddress: 120,
  /** API keys of a company that has not chosen a plan yet spend the Free budget */
  keysWithoutPlan: PLANS.free.requestsPerMinute,
} as const;

/**
 * Separate buckets per minute: per client address on public routes whatever token is attached, per company
 * on signed-in routes (api/middlewares/rateLimit.ts chooseBudget). A route names its bucket in its spec
 * (`bucket`); such a request counts only against the bucket, never against the main budget.
 */
export const BUCKETS = {
  /** POST /auth/login */
  signIn: 10,
  /** register, reset a password, accept an invitation */
  register: 10,
  /** forgot password, resend the activation email */
  forgotPassword: 5,
  /** open the demo */
  demo: 20,
  /** PATCH /subscriptions/me */
  plan: 10,
} as const;
export type BucketName = keyof typeof BUCKETS;

/** What each bucket covers, as a 429's message names it ("the sign-in limit is 10 per minute"). */
export const BUCKET_LABELS: Record<BucketName, string> = {
  signIn: 'sign-in',
  register: 'registration, password reset, invitation and activation',
  forgotPassword: 'forgot-password and resend-activation',
  demo: 'demo opening',
  plan: 'plan change',
};
