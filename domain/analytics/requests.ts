/**
 * Authenticated requests per day, person and API key (analytics_requests): the source of "API requests per
 * key" and of "active people" in GET /analytics. The request budget's counters (db/counters.ts) cannot serve:
 * they are per company for keys (all keys share the budget) and expire with their one-minute window.
 */
import type { Knex } from 'knex';
import { actingStatement } from '../../db/unitOfWork';

/** The API key column of a request made with a session. */
export const SESSION_KEY = '00000000-0000-0000-0000-000000000000';

export interface RequestCaller {
  companyId: string;
  personId: string;
  apiKeyId?: string | null;
}

/**
 * Counts one authenticated request: a single upsert, acting for the caller's company (its connection is set
 * to the company when taken from the pool, so it costs one round trip).
 */
export async function countRequest(knex: Knex, caller: RequestCaller): Promise<void> {
  await actingStatement({ companyId: caller.companyId }, () =>
    knex.raw(
      `insert into analytics_requests as r (company_id, day, person_id, api_key_id, requests)
       values (?, (now() at time zone 'UTC')::date, ?, ?, 1)
       on conflict (company_id, day, person_id, api_key_id) do update set requests = r.requests + 1`,
      [caller.companyId, caller.personId, caller.apiKeyId ?? SESSION_KEY],
    ),
  );
}
