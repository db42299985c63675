/**
 * Fixed-window counters in `rate_limit_counters` (db/migrations/20261122000300_platform.ts) through
 * rate-limiter-flexible: one atomic upsert per point taken (INSERT .. ON CONFLICT DO UPDATE .. RETURNING
 * points), so N concurrent takers get N distinct counts across every process. The API's request budgets
 * (api/middlewares/rateLimit.ts) and the per-account sign-in failures (domain/identity/signInFailures.ts)
 * both count here. The counters are no tenant rows.
 */
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { withoutTenantRows } from './unitOfWork';

const limiters = new WeakMap<Knex, Map<string, RateLimiterPostgres>>();

/**
 * The counter `name` of `points` per `durationSeconds` (fixed windows, from a key's first point). Counters
 * of one name share their counts whatever the points (a plan change keeps the count). One limiter per knex
 * and setting; the first of a knex runs the library's 5-minute sweep of expired rows of the shared table.
 */
export function windowCounter(
  knex: Knex,
  name: string,
  points: number,
  durationSeconds: number,
): RateLimiterPostgres {
  let byId = limiters.get(knex);
  if (!byId) {
    byId = new Map();
    limiters.set(knex, byId);
  }
  const id = `${name}/${points}/${durationSeconds}`;
  let limiter = byId.get(id);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: knex,
      storeType: 'knex',
      tableName: 'rate_limit_counters',
      tableCreated: true,
      clearExpiredByTimeout: byId.size === 0,
      keyPrefix: name,
      points,
      duration: durationSeconds,
    });
    byId.set(id, limiter);
  }
  return limiter;
}

/**
 * Takes a point of `key`: `allowed` false (and nothing taken) once the window's points are used. The
 * statement runs in `withoutTenantRows`: its connection keeps whatever actor it holds (no extra round trip).
 */
export async function takePoint(
  limiter: RateLimiterPostgres,
  key: string,
): Promise<{ allowed: boolean; state: RateLimiterRes }> {
  try {
    return { allowed: true, state: await withoutTenantRows(() => limiter.consume(key)) };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { allowed: false, state: rejection };
    throw rejection;
  }
}
