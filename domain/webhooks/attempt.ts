/**
 * One attempt of a delivery: the envelope, signed with the endpoint's current secret, posted through the
 * guarded sender (sender.ts), and recorded (store.ts). What follows an attempt — a retry by Temporal's retry
 * policy, a hand-over to a delivery's own workflow — is the caller's business (batch.ts, the activities).
 */
import type { Config } from '../../common/config';
import type { AttemptRecord } from '../../workflows/definitions/webhooks';
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_SCHEMA_VERSION, WEBHOOK_USER_AGENT } from './policy';
import { webhookSecretBox } from './secret';
import { createWebhookSender, type WebhookSender } from './sender';
import { signWebhook } from './signature';
import type { DeliveryRow, DeliveryStore } from './store';
import type { Resolver } from './targets';

/** What an attempt came to; the caller (a delivery's workflow, or a batch) decides what follows. */
export type AttemptOutcome =
  | { kind: 'succeeded'; attempt: number; responseStatus: number }
  /** failed; attempts remain */
  | { kind: 'retry'; record: AttemptRecord }
  /** the last attempt failed */
  | { kind: 'failed'; record: AttemptRecord }
  /** the receiver answered 410: the endpoint is disabled, the delivery fails */
  | { kind: 'gone'; record: AttemptRecord }
  /** the endpoint is disabled: nothing was sent (a deleted endpoint takes its deliveries with it) */
  | { kind: 'inactive'; message: string };

/** The envelope, byte for byte the same on every attempt and every redelivery of the event. */
export function envelopeBody(row: {
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  companyId: string;
  eventData: Record<string, unknown>;
}): string {
  return JSON.stringify({
    id: row.eventId,
    type: row.eventType,
    createdAt: new Date(row.eventCreatedAt).toISOString(),
    companyId: row.companyId,
    schemaVersion: WEBHOOK_SCHEMA_VERSION,
    data: row.eventData,
  });
}

/** The request headers of one attempt: the event's id, the time of sending and the signature over both. */
export function deliveryHeaders(
  secret: string,
  eventId: string,
  body: string,
  timestamp: number,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, timestamp, body),
  };
}

export interface AttempterDeps {
  config: Config;
  store: DeliveryStore;
  /** DNS for the address guard (tests pass one to simulate rebinding) */
  resolver?: Resolver;
  sender?: WebhookSender;
}

export function createAttempter(deps: AttempterDeps) {
  const { config, store } = deps;
  const box = webhookSecretBox(config.secretKey);
  const sender =
    deps.sender ??
    createWebhookSender({
      policy: config.webhooks,
      timeoutMs: config.webhooks.attemptTimeoutMs,
      resolver: deps.resolver,
    });

  /**
   * Makes attempt number `attempt` of a loaded delivery and records it: reads nothing more, throws nothing
   * for a receiver's failure; the caller decides what follows from the outcome.
   */
  async function attemptOnce(row: DeliveryRow, attempt: number): Promise<AttemptOutcome> {
    if (!row.active) return { kind: 'inactive', message: 'the endpoint is disabled: nothing more is sent' };
    const body = envelopeBody(row);
    const timestamp = Math.floor(Date.now() / 1000);
    const secret = box.open(row.endpointId, row.secretEncrypted);
    const outcome = await sender.post(row.url, deliveryHeaders(secret, row.eventId, body, timestamp), body);

    const status = outcome.status;
    if (status !== null && status >= 200 && status < 300) {
      await store.recordSucceeded(row.id, attempt, status);
      return { kind: 'succeeded', attempt, responseStatus: status };
    }

    const gone = status === 410;
    const error = `attempt ${attempt}: ${
      status !== null
        ? `receiver answered ${status}${gone ? ' Gone; endpoint disabled' : ''}`
        : (outcome.error ?? 'no answer')
    }`;
    const willRetry = !gone && attempt < WEBHOOK_MAX_ATTEMPTS;
    await store.recordFailed(row, { attempt, responseStatus: status, error, willRetry, gone });
    const record = { attempt, responseStatus: status, error, at: new Date().toISOString() };
    return { kind: gone ? 'gone' : willRetry ? 'retry' : 'failed', record };
  }

  return { attemptOnce };
}

export type Attempter = ReturnType<typeof createAttempter>;

/** What one attempt of a delivery's own workflow came to (the activity turns it into a result or a failure). */
export type WorkflowAttemptOutcome =
  | AttemptOutcome
  /** the delivery record no longer exists (endpoint deleted, retention) */
  | { kind: 'missing' }
  /** another workflow (e.g. a batch of the start sweep) owns the delivery and attempts it */
  | { kind: 'owned-elsewhere' }
  /** finished by an earlier run of this attempt whose completion Temporal did not hear of */
  | { kind: 'finished'; status: string; attempts: number; responseStatus: number | null };

/**
 * One attempt made by a delivery's own workflow (`owner`): reads the delivery and its endpoint now (so a
 * rotated secret or a disable applies at once), takes the delivery over from `handedOverBy` if it was a
 * batch's, and attempts it unless it is finished or another workflow owns it. The attempt is counted on the
 * record before it is sent, as a batch counts a first attempt, so a worker lost before recording the
 * answer (of the 5th attempt above all: no later attempt counts past it) leaves the attempt on record.
 */
export async function attemptForWorkflow(
  store: DeliveryStore,
  attempter: Attempter,
  input: { deliveryId: string; attempt: number; owner: string; handedOverBy?: string },
): Promise<WorkflowAttemptOutcome> {
  const row = await store.load(input.deliveryId);
  if (!row) return { kind: 'missing' };
  if (!row.completedAt && !(await store.claim(row.id, input.owner, input.handedOverBy))) {
    return { kind: 'owned-elsewhere' };
  }
  if (row.completedAt) return finishedOutcome(row);
  const begun = await store.beginAttempt(row.id, input.attempt);
  if (!begun) {
    // finished (or removed) since it was read
    const now = await store.load(row.id);
    return now ? finishedOutcome(now) : { kind: 'missing' };
  }
  return attempter.attemptOnce({ ...row, ...begun }, input.attempt);
}

function finishedOutcome(row: DeliveryRow): WorkflowAttemptOutcome {
  return {
    kind: 'finished',
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.responseStatus,
  };
}
