/**
 * Authenticated requests per day, person and API key (analytics_requests): the source of "API requests per
 * key" and of "active people" in GET /analytics. The request budget's counters (db/counters.ts) cannot serve:
 * they are per company for keys (all keys share the budget) and expire with their one-minute window.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Knex } from 'knex';
import { actingStatement } from '../../db/unitOfWork';

/** The API key column of a request made with a session. */
export const SESSION_KEY = '00000000-0000-0000-0000-000000000000';

export interface RequestCaller {
  companyId: string;
  personId: string;
  apiKeyId?: string | null;
}

/** How long counts wait in memory before one upsert per company writes them. */
export const REQUEST_COUNT_FLUSH_MS = 2000;

interface Pending {
  companyId: string;
  day: string;
  personId: string;
  apiKeyId: string;
  requests: number;
  /** writes of these counts that failed (dropped after MAX_WRITE_FAILURES: e.g. their company is gone) */
  failures: number;
}

const MAX_WRITE_FAILURES = 3;

/**
 * Runs `fn` in the asynchronous context this module was loaded in, outside every request: the timed write
 * belongs to no request, though the request that counted first starts its timer (a timer takes the context
 * it is created in, so the write's statements would count as that request's — in its correlation id, in a
 * request's SQL count).
 */
const outsideRequests = AsyncResource.bind(<T>(fn: () => T): T => fn());

/**
 * The counts of one API process (one per knex pool): counted in memory and written every
 * REQUEST_COUNT_FLUSH_MS by one multi-row upsert per company, so a request waits on no write and
 * concurrent requests of one key do not queue on its counter row (an upsert per request did both: a round
 * trip, a commit and a row lock each). A failed write keeps its counts for the next ones (three tries). What a process
 * had not written when it dies (at most the last interval) is lost: analytics, not billing (README).
 */
class RequestCounts {
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  /** reports a failed write (the API: the logger of the latest request that counted) */
  onError: (err: unknown) => void = () => undefined;

  constructor(private readonly knex: Knex) {}

  add(caller: RequestCaller, now: Date): void {
    const row: Pending = {
      companyId: caller.companyId,
      day: now.toISOString().slice(0, 10),
      personId: caller.personId,
      apiKeyId: caller.apiKeyId ?? SESSION_KEY,
      requests: 1,
      failures: 0,
    };
    const key = `${row.companyId}|${row.day}|${row.personId}|${row.apiKeyId}`;
    const seen = this.pending.get(key);
    if (seen) seen.requests += 1;
    else this.pending.set(key, row);
    this.scheduleWrite();
  }

  private scheduleWrite(): void {
    this.timer ??= outsideRequests(() => setTimeout(() => void this.flush(), REQUEST_COUNT_FLUSH_MS).unref());
  }

  /** Writes what is counted so far (after any write under way). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: Pending[]): Promise<void> {
    const byCompany = new Map<string, Pending[]>();
    for (const row of batch) byCompany.set(row.companyId, [...(byCompany.get(row.companyId) ?? []), row]);
    for (const [companyId, rows] of byCompany) {
      try {
        await actingStatement({ companyId }, () =>
          this.knex.raw(
            `insert into analytics_requests as r (company_id, day, person_id, api_key_id, requests)
             values ${rows.map(() => '(?, ?::date, ?, ?, ?)').join(', ')}
             on conflict (company_id, day, person_id, api_key_id) do update set requests = r.requests + excluded.requests`,
            rows.flatMap((r) => [r.companyId, r.day, r.personId, r.apiKeyId, r.requests]),
          ),
        );
      } catch (err) {
        this.onError(err);
        // kept for the next write (added to what has been counted since), a few times at most
        for (const row of rows) {
          if (row.failures + 1 >= MAX_WRITE_FAILURES) continue;
          const key = `${row.companyId}|${row.day}|${row.personId}|${row.apiKeyId}`;
          const seen = this.pending.get(key);
          if (seen) seen.requests += row.requests;
          else this.pending.set(key, { ...row, failures: row.failures + 1 });
        }
        this.scheduleWrite();
      }
    }
  }
}

const countsOf = new WeakMap<Knex, RequestCounts>();

function countsFor(knex: Knex): RequestCounts {
  let counts = countsOf.get(knex);
  if (!counts) countsOf.set(knex, (counts = new RequestCounts(knex)));
  return counts;
}

/**
 * Counts one authenticated request, in memory (written within REQUEST_COUNT_FLUSH_MS; `flushRequestCounts`
 * writes at once). Never throws and never waits: a failed write is reported to `onError` and retried.
 */
export function countRequest(
  knex: Knex,
  caller: RequestCaller,
  onError?: (err: unknown) => void,
  now = new Date(),
): void {
  const counts = countsFor(knex);
  if (onError) counts.onError = onError;
  counts.add(caller, now);
}

/** Writes this process's counted requests now (GET /analytics reads after it; the API flushes on shutdown). */
export function flushRequestCounts(knex: Knex): Promise<void> {
  return countsOf.get(knex)?.flush() ?? Promise.resolve();
}
