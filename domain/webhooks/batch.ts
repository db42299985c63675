/**
 * Batching lanes: the first attempts of a batch's deliveries side by side, at most FIRST_ATTEMPTS_IN_FLIGHT
 * at once and PER_ENDPOINT_IN_FLIGHT to one endpoint, so a receiver that hangs holds up only its own
 * deliveries. Each one to retry is handed over at once to a workflow of its own (starts.ts).
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../../common/config';
import type {
  AttemptRecord,
  FirstAttemptOutcome,
  WebhookBatchInput,
} from '../../workflows/definitions/webhooks';
import type { Attempter } from './attempt';
import { deliveryPolicy } from './policy';
import { startDeliveryRetry } from './starts';
import type { DeliveryRow, DeliveryStore } from './store';

/** How many first attempts one batch activity has in flight at once, and to one endpoint. */
const FIRST_ATTEMPTS_IN_FLIGHT = 32;
const PER_ENDPOINT_IN_FLIGHT = 8;

export type FirstAttemptsInput = Pick<WebhookBatchInput, 'companyId' | 'deliveries'>;

export interface FirstAttemptsResult {
  succeeded: number;
  failed: number;
  cancelled: number;
  /** first attempt failed: each continues in a workflow of its own, started as soon as it failed */
  retrying: string[];
  /** every delivery of the batch this batch attempted, in the order the attempts ended */
  outcomes: FirstAttemptOutcome[];
  /**
   * not attempted: the company is suspended (README "Billing"); the batch workflow waits and runs these again.
   * Absent when none.
   */
  held?: string[];
}

/** At most `size` tasks at once; the others wait their turn in order. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = size;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

export interface BatchDeps {
  config: Config;
  store: DeliveryStore;
  attempter: Attempter;
  /** starts the delivery workflows that take over failed first attempts */
  temporal: Client;
  /** whether the batch's company is suspended now (hold.ts `suspensionCheck`); never, when not given */
  suspended?: () => Promise<boolean>;
}

/**
 * The first attempt of one delivery of a batch, its outcome added to `result`; a failure that will be
 * retried is handed over at once (`handOver` starts the delivery's own workflow).
 */
async function firstAttempt(
  deps: BatchDeps,
  row: DeliveryRow,
  result: FirstAttemptsResult,
  handOver: (attempt: AttemptRecord) => Promise<void>,
): Promise<void> {
  const { store, attempter } = deps;
  const add = (status: FirstAttemptOutcome['status'], responseStatus: number | null) =>
    result.outcomes.push({ deliveryId: row.id, status, responseStatus });
  const retry = async (attempt: AttemptRecord) => {
    await handOver(attempt);
    result.retrying.push(row.id);
    add('retrying', attempt.responseStatus);
  };
  if (row.completedAt) {
    // finished by an earlier run of this activity (which was lost before it could report)
    const status = row.status as 'succeeded' | 'failed' | 'cancelled';
    result[status]++;
    add(status, row.responseStatus);
    return;
  }
  if (row.attempts > 0) {
    // begun by an earlier, lost run of this activity: it goes on to retry (again, if it was handed
    // over already: starting is idempotent), and an attempt that never recorded its outcome failed
    await retry(await store.recordLost(row));
    return;
  }
  if (deps.suspended && (await deps.suspended())) {
    // the company is suspended: nothing is sent, nothing counted; the batch tries again later
    (result.held ??= []).push(row.id);
    return;
  }
  const begun = await store.beginFirstAttempt(row.id);
  if (!begun) return;
  const outcome = await attempter.attemptOnce({ ...row, ...begun }, 1);
  switch (outcome.kind) {
    case 'succeeded':
      result.succeeded++;
      add('succeeded', outcome.responseStatus);
      break;
    case 'retry':
      await retry(outcome.record);
      break;
    case 'gone':
    case 'failed':
      // recorded and finished (failure counted) in one transaction by the attempt
      result.failed++;
      add('failed', outcome.record.responseStatus);
      break;
    case 'inactive':
      await store.finish({ deliveryId: row.id, outcome: 'cancelled', error: outcome.message });
      result.cancelled++;
      add('cancelled', null);
      break;
  }
}

/**
 * The first attempt of each delivery of a batch owned by the workflow `owner`, each recorded as it ends.
 * Deliveries that succeed, or end for good (410, endpoint disabled), are finished here; each one to retry
 * is handed at once to `webhook-delivery:<deliveryId>`, which waits the first delay and makes attempts 2
 * to 5. Run again after a lost worker, it attempts only what is not attempted yet, hands over again what
 * was attempted (starting is idempotent), and reports what was finished before. One delivery's error
 * (database, Temporal) does not stop the others: they are returned in `errors`.
 */
export async function deliverFirstAttempts(
  deps: BatchDeps,
  input: FirstAttemptsInput,
  owner: string,
): Promise<{ result: FirstAttemptsResult; errors: unknown[] }> {
  const { config, store, temporal } = deps;
  const policy = deliveryPolicy(config.webhooks);
  const correlation = new Map(input.deliveries.map((d) => [d.id, d.correlationId ?? null]));
  const result: FirstAttemptsResult = { succeeded: 0, failed: 0, cancelled: 0, retrying: [], outcomes: [] };
  const errors: unknown[] = [];
  const ids = input.deliveries.map((d) => d.id);
  await store.claimUnowned(ids, owner);
  const rows = await store.loadOwned(ids, owner);
  // each endpoint has its own lanes: a receiver that hangs holds up only its own deliveries
  const byEndpoint = new Map<string, DeliveryRow[]>();
  for (const row of rows) {
    const queue = byEndpoint.get(row.endpointId) ?? [];
    queue.push(row);
    byEndpoint.set(row.endpointId, queue);
  }
  const slots = new Slots(FIRST_ATTEMPTS_IN_FLIGHT);
  const lanes: Array<Promise<void>> = [];
  for (const queue of byEndpoint.values()) {
    let next = 0;
    const lane = async () => {
      while (next < queue.length) {
        const row = queue[next++];
        const handOver = (attempt: AttemptRecord) =>
          startDeliveryRetry(temporal, config, {
            deliveryId: row.id,
            companyId: input.companyId,
            correlationId: correlation.get(row.id) ?? null,
            policy,
            attempt,
            handedOverBy: owner,
          });
        await slots
          .run(() => firstAttempt(deps, row, result, handOver))
          .catch((err: unknown) => {
            errors.push(err);
          });
      }
    };
    for (let i = 0; i < Math.min(PER_ENDPOINT_IN_FLIGHT, queue.length); i++) lanes.push(lane());
  }
  await Promise.all(lanes);
  return { result, errors };
}
