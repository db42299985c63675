import type { Next } from 'koa';
import type Router from '@koa/router';
import type { Knex } from 'knex';
import ipaddr from 'ipaddr.js';
import { TooManyRequestsError } from '../../common/errors';
import { BUCKET_LABELS, BUCKETS, PLANS, REQUEST_BUDGETS } from '../../domain/plans/plans';
import type { AppContext } from '../context';
import { identifyCaller, type CallerIdentity } from '../callers';
import { findRoute, type RouteSpec } from '../routing';
import { takePoint, windowCounter } from '../../db/counters';

const WINDOW_SECONDS = 60;

/** The budget (or separate bucket) one request is counted against. */
export interface Budget {
  /** 'budget' for the main request budget, 'bucket:<name>' for a separate bucket */
  name: string;
  limit: number;
  /** whose counter: company:<id>, person:<id> or address:<ip> */
  subject: string;
}

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** whole seconds until the window resets (also the Retry-After value on 429) */
  resetSeconds: number;
}

/**
 * Per-minute request budgets, counted in PostgreSQL (db/counters.ts), so N concurrent requests get N distinct
 * counts across every API copy and exactly `limit` of them pass.
 */
export class RequestCounters {
  constructor(private readonly knex: Knex) {}

  async consume(budget: Budget): Promise<Decision> {
    const limiter = windowCounter(this.knex, budget.name, budget.limit, WINDOW_SECONDS);
    const { allowed, state } = await takePoint(limiter, budget.subject);
    return {
      allowed,
      limit: budget.limit,
      remaining: allowed ? Math.max(0, state.remainingPoints) : 0,
      resetSeconds: Math.max(1, Math.ceil(state.msBeforeNext / 1000)),
    };
  }
}

/**
 * The address part of a counter: IPv4 as is, IPv6 by its /64 network (one host usually holds a whole /64,
 * so counting single IPv6 addresses would let it rotate through millions of budgets).
 */
export function addressSubject(address: string): string {
  if (ipaddr.IPv6.isValid(address) && !ipaddr.IPv4.isValid(address)) {
    const bytes = ipaddr.IPv6.parse(address).toByteArray().slice(0, 8);
    const network = ipaddr.fromByteArray([...bytes, 0, 0, 0, 0, 0, 0, 0, 0]).toString();
    return `address:${network}/64`;
  }
  return `address:${address}`;
}

/**
 * The spec's table: which budget a request spends, from its route and its caller.
 *
 * A bucket of a public route (sign-in, register, reset, accept an invitation, activate, forgot password,
 * resend, Google code exchange, demo) is always counted per client address: a token attached to a public
 * request signs nothing in, and counting it for the token's company would let anyone holding tokens of
 * several companies multiply the attempts one address gets (rule 1: "10 attempts a minute per address").
 * Only a bucket of a signed-in route (choosing a plan) is counted per company.
 */
export function chooseBudget(spec: RouteSpec | undefined, caller: CallerIdentity, address: string): Budget {
  if (spec?.bucket) {
    return {
      name: `bucket:${spec.bucket}`,
      limit: BUCKETS[spec.bucket],
      subject:
        spec.access.public || caller.kind === 'anonymous'
          ? addressSubject(address)
          : `company:${caller.companyId}`,
    };
  }
  switch (caller.kind) {
    case 'key':
      return {
        name: 'budget',
        limit: caller.plan ? PLANS[caller.plan].requestsPerMinute : REQUEST_BUDGETS.keysWithoutPlan,
        subject: `company:${caller.companyId}`,
      };
    case 'session':
      return {
        name: 'budget',
        limit: REQUEST_BUDGETS.sessionPerPerson,
        // every demo visitor acts as the demo company's one person: one visitor must not spend the others'
        // budget, so demo sessions are counted per client address
        subject: caller.demo ? `demo-${addressSubject(address)}` : `person:${caller.personId}`,
      };
    default:
      return { name: 'budget', limit: REQUEST_BUDGETS.anonymousPerAddress, subject: addressSubject(address) };
  }
}

export function setRateLimitHeaders(ctx: AppContext, d: Decision): void {
  ctx.set('X-RateLimit-Limit', String(d.limit));
  ctx.set('X-RateLimit-Remaining', String(d.remaining));
  ctx.set('X-RateLimit-Reset', String(d.resetSeconds));
}

/** 429 for a request over its budget or bucket. */
function overLimit(spec: RouteSpec | undefined, budget: Budget, decision: Decision): TooManyRequestsError {
  return new TooManyRequestsError(
    budget.name.startsWith('bucket:') && spec?.bucket
      ? `too many requests: the ${BUCKET_LABELS[spec.bucket]} limit is ${decision.limit} per minute`
      : `request budget of ${decision.limit} per minute used`,
    decision.resetSeconds,
  );
}

/**
 * App-level middleware, before body parsing and routing, so every answer (unknown routes, 401s of
 * authentication, body errors, 5xx) is counted once and carries the X-RateLimit-* headers. The caller is
 * identified cheaply here (api/callers.ts); authentication proper still runs in the route chain.
 *
 * The bucket of a signed-in route (choosing a plan, counted per company) is counted once the caller is
 * authorized (`countBucket`, in the route chain after authentication): a caller the route refuses (an
 * employee, a key without the right) would otherwise spend the company's bucket and keep its admins from
 * choosing a plan. A request that does not get that far is counted against its caller's own budget.
 */
export function rateLimit(router: Router, counters: RequestCounters) {
  return async (ctx: AppContext, next: Next) => {
    const spec = findRoute(router, ctx.method, ctx.path);
    // the key lookup needs PostgreSQL: if it fails the request is counted per address (and authentication,
    // which needs the same read, answers the failure)
    const caller = await identifyCaller(ctx).catch((): CallerIdentity => ({ kind: 'anonymous' }));
    const budget = chooseBudget(spec, caller, ctx.state.clientIp);
    const count = async (b: Budget) => {
      let decision: Decision;
      try {
        decision = await counters.consume(b);
      } catch (err) {
        // Fail open: the counters live in the PostgreSQL every route needs, so while it is unreachable there
        // is nothing to protect, and /health (liveness) must still answer. The request is not counted.
        ctx.state.log.warn({ err }, 'request budget store unavailable: request not counted');
        decision = { allowed: true, limit: b.limit, remaining: b.limit, resetSeconds: WINDOW_SECONDS };
      }
      setRateLimitHeaders(ctx, decision);
      if (!decision.allowed) throw overLimit(spec, b, decision);
    };
    if (!spec?.bucket || spec.access.public || caller.kind === 'anonymous') {
      await count(budget);
      await next();
      return;
    }
    let counted = false;
    ctx.state.countBucket = async () => {
      counted = true;
      await count(budget);
    };
    try {
      await next();
    } catch (err) {
      // refused before the bucket (authentication, authorization, the body): the caller's own budget
      if (!counted) await count(chooseBudget(undefined, caller, ctx.state.clientIp));
      throw err;
    }
    if (!counted) await count(chooseBudget(undefined, caller, ctx.state.clientIp));
  };
}

/**
 * Route chain, after authentication: counts a signed-in route's bucket now that the caller is known to be
 * allowed (see `rateLimit`); nothing on other routes.
 */
export function countBucket() {
  return async (ctx: AppContext, next: Next) => {
    await ctx.state.countBucket?.();
    await next();
  };
}
