import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { recordAudit } from '../db/audit';
import type { OutboxEvent } from '../db/models';
import {
  FAILURE,
  WEBHOOK_DELIVERY_RETENTION_DAYS,
  WEBHOOK_FAILURES_BEFORE_DISABLE,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_SCHEMA_VERSION,
  WEBHOOK_USER_AGENT,
  deliveryPolicy,
} from '../domain/webhooks/policy';
import { webhookSecretBox } from '../domain/webhooks/secret';
import { signWebhook } from '../domain/webhooks/signature';
import type { Resolver } from '../domain/webhooks/targets';
import { startDeliveryBatches, startDeliveryRetry, type DeliveryToStart } from '../domain/webhooks/starts';
import type { AfterCommit, FanOut } from './outbox';
import { createWebhookSender, type WebhookSender } from '../domain/webhooks/sender';
import { attemptFailedSignal, type AttemptRecord } from '../workflows/webhookDelivery';

export interface WebhookDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  /** signals each failed attempt into the delivery workflow's history; starts delivery workflows */
  temporal?: Client;
  /** DNS for the address guard (tests pass one to simulate rebinding) */
  resolver?: Resolver;
  sender?: WebhookSender;
}

export interface AttemptResult {
  attempt: number;
  responseStatus: number | null;
}

export interface CompleteInput {
  deliveryId: string;
  outcome: 'failed' | 'cancelled';
  /** set when the attempt could not record its own error (e.g. the worker was lost) */
  error: string | null;
}

/** How many first attempts one batch activity has in flight at once, and to one endpoint. */
const FIRST_ATTEMPTS_IN_FLIGHT = 32;
const PER_ENDPOINT_IN_FLIGHT = 8;

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

/** What an attempt came to; the caller (a delivery's workflow, or a batch) decides what follows. */
type AttemptOutcome =
  | { kind: 'succeeded'; attempt: number; responseStatus: number }
  /** failed; attempts remain */
  | { kind: 'retry'; record: AttemptRecord }
  /** the last attempt failed */
  | { kind: 'failed'; record: AttemptRecord }
  /** the receiver answered 410: the endpoint is disabled, the delivery fails */
  | { kind: 'gone'; record: AttemptRecord }
  /** the endpoint is disabled: nothing was sent (a deleted endpoint takes its deliveries with it) */
  | { kind: 'inactive'; message: string };

/** One delivery's first attempt as the batch's history shows it. */
export interface FirstAttemptOutcome {
  deliveryId: string;
  /** the delivery's status after its first attempt (`retrying`: handed to its own workflow) */
  status: 'succeeded' | 'retrying' | 'failed' | 'cancelled';
  responseStatus: number | null;
}

export interface FirstAttemptsResult {
  succeeded: number;
  failed: number;
  cancelled: number;
  /** first attempt failed: each continues in a workflow of its own, started as soon as it failed */
  retrying: string[];
  /** every delivery of the batch this batch attempted, in the order the attempts ended */
  outcomes: FirstAttemptOutcome[];
}

export interface FirstAttemptsInput {
  companyId: string;
  deliveries: Array<{ id: string; correlationId?: string | null }>;
}

/** The workflow an activity runs for: the one that owns the deliveries it attempts. */
function ownerOf(info: { workflowExecution?: { workflowId: string } }): string {
  const id = info.workflowExecution?.workflowId;
  if (!id) throw ApplicationFailure.nonRetryable('webhook attempts run inside a workflow only');
  return id;
}

/** A recorded attempt read back from the delivery row. */
function recordOf(row: DeliveryRow): AttemptRecord {
  return {
    attempt: row.attempts,
    responseStatus: row.responseStatus,
    error: row.lastError,
    at: new Date(row.lastAttemptAt ?? Date.now()).toISOString(),
  };
}

interface DeliveryRow {
  id: string;
  companyId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  eventData: Record<string, unknown>;
  eventCreatedAt: Date;
  completedAt: Date | null;
  status: string;
  attempts: number;
  responseStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  url: string;
  active: boolean;
  secretEncrypted: string;
}

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

export function createWebhookActivities(deps: WebhookDeps) {
  const { knex, logger, config } = deps;
  const box = webhookSecretBox(config.secretKey);
  const sender =
    deps.sender ??
    createWebhookSender({
      policy: config.webhooks,
      timeoutMs: config.webhooks.attemptTimeoutMs,
      resolver: deps.resolver,
    });

  const deliveryColumns = [
    'd.id',
    'd.companyId',
    'd.endpointId',
    'd.eventId',
    'd.eventType',
    'd.eventData',
    'd.eventCreatedAt',
    'd.completedAt',
    'd.status',
    'd.attempts',
    'd.responseStatus',
    'd.lastError',
    'd.lastAttemptAt',
    'e.url',
    'e.active',
    'e.secretEncrypted',
  ];

  function deliveriesWithEndpoints() {
    // a delivery cannot outlive its endpoint (the foreign key cascades): an inner join
    return knex('webhookDeliveries as d').join('webhookEndpoints as e', 'e.id', 'd.endpointId');
  }

  async function loadDelivery(deliveryId: string): Promise<DeliveryRow | undefined> {
    return deliveriesWithEndpoints()
      .where('d.id', deliveryId)
      .first<DeliveryRow | undefined>(deliveryColumns);
  }

  /**
   * The deliveries among `ids` that `owner` owns, in creation order, so a batch posts them in the order
   * their events were committed.
   */
  async function loadDeliveries(ids: string[], owner: string): Promise<DeliveryRow[]> {
    if (ids.length === 0) return [];
    return deliveriesWithEndpoints()
      .whereIn('d.id', ids)
      .where('d.ownerWorkflowId', owner)
      .orderBy([{ column: 'd.createdAt' }, { column: 'd.id' }])
      .select<DeliveryRow[]>(deliveryColumns);
  }

  /** Disables an active endpoint for a reason the service found; audited, and shown on the endpoint. */
  async function disableEndpoint(
    trx: Knex.Transaction,
    endpointId: string,
    reason: 'receiver_gone' | 'consecutive_failures',
    details: Record<string, unknown>,
  ): Promise<boolean> {
    const disabled = await trx('webhookEndpoints')
      .where({ id: endpointId, active: true })
      .update({ active: false, disabledReason: reason, disabledAt: trx.fn.now(), updatedAt: trx.fn.now() })
      .returning<Array<{ id: string; companyId: string }>>(['id', 'companyId']);
    if (disabled.length === 0) return false;
    await recordAudit(trx, {
      companyId: disabled[0].companyId,
      personId: null,
      action: 'webhook_endpoint.disabled',
      resourceType: 'webhook_endpoint',
      resourceId: endpointId,
      details: { reason, automatic: true, ...details },
    });
    logger.warn({ endpointId, reason, ...details }, 'webhook endpoint disabled automatically');
    return true;
  }

  async function signalFailedAttempt(record: AttemptRecord): Promise<void> {
    if (!deps.temporal) return;
    try {
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      if (workflowId) await deps.temporal.workflow.getHandle(workflowId).signal(attemptFailedSignal, record);
    } catch (err) {
      logger.debug({ err }, 'could not signal the failed attempt into workflow history');
    }
  }

  /**
   * Finishes a delivery that did not succeed, once: `completed_at` guards it, so a retried call changes
   * nothing. A failed delivery adds one to the endpoint's failures in a row; the update holds the
   * endpoint's row lock, so concurrent deliveries count one by one, and the 20th disables it.
   */
  async function finishDelivery(
    input: CompleteInput,
  ): Promise<{ attempts: number; responseStatus: number | null }> {
    return knex.transaction(async (trx) => {
      const finished = await trx('webhookDeliveries')
        .where({ id: input.deliveryId })
        .whereNull('completedAt')
        .update({
          status: input.outcome,
          completedAt: trx.fn.now(),
          updatedAt: trx.fn.now(),
          ...(input.error ? { lastError: input.error } : {}),
        })
        .returning<
          Array<{ endpointId: string; eventId: string; attempts: number; responseStatus: number | null }>
        >(['endpointId', 'eventId', 'attempts', 'responseStatus']);
      if (finished.length === 0) {
        const current = await trx('webhookDeliveries')
          .where({ id: input.deliveryId })
          .first<{ attempts: number; responseStatus: number | null } | undefined>(
            'attempts',
            'responseStatus',
          );
        return { attempts: current?.attempts ?? 0, responseStatus: current?.responseStatus ?? null };
      }
      const delivery = finished[0];
      if (input.outcome === 'failed') {
        const counted = await trx('webhookEndpoints')
          .where({ id: delivery.endpointId })
          .increment('consecutiveFailures', 1)
          .returning<Array<{ consecutiveFailures: number; active: boolean }>>([
            'consecutiveFailures',
            'active',
          ]);
        const endpoint = counted[0];
        if (endpoint?.active && endpoint.consecutiveFailures >= WEBHOOK_FAILURES_BEFORE_DISABLE) {
          await disableEndpoint(trx, delivery.endpointId, 'consecutive_failures', {
            consecutiveFailures: endpoint.consecutiveFailures,
            lastDeliveryId: input.deliveryId,
            eventId: delivery.eventId,
          });
        }
      }
      return { attempts: delivery.attempts, responseStatus: delivery.responseStatus };
    });
  }

  /**
   * Makes attempt number `attempt` of a loaded delivery and records it: reads nothing more, throws nothing
   * for a receiver's failure; the caller decides what follows from the outcome.
   */
  async function attemptOnce(row: DeliveryRow, attempt: number): Promise<AttemptOutcome> {
    if (!row.active) return { kind: 'inactive', message: 'the endpoint is disabled: nothing more is sent' };
    const body = envelopeBody(row);
    const timestamp = Math.floor(Date.now() / 1000);
    const secret = box.open(row.endpointId, row.secretEncrypted);
    const outcome = await sender.post(
      row.url,
      {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'webhook-id': row.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, timestamp, body),
      },
      body,
    );

    const status = outcome.status;
    if (status !== null && status >= 200 && status < 300) {
      // finish in one statement: the delivery, and the endpoint's failure count back to 0
      await knex.raw(
        `with d as (
           update webhook_deliveries
              set status = 'succeeded', attempts = greatest(attempts, ?), response_status = ?,
                  last_attempt_at = now(), completed_at = now(), updated_at = now()
            where id = ? and completed_at is null
        returning endpoint_id)
         update webhook_endpoints e set consecutive_failures = 0
           from d where e.id = d.endpoint_id and e.consecutive_failures <> 0`,
        [attempt, status, row.id],
      );
      return { kind: 'succeeded', attempt, responseStatus: status };
    }

    const gone = status === 410;
    const error = `attempt ${attempt}: ${
      status !== null
        ? `receiver answered ${status}${gone ? ' Gone; endpoint disabled' : ''}`
        : (outcome.error ?? 'no answer')
    }`;
    const willRetry = !gone && attempt < WEBHOOK_MAX_ATTEMPTS;
    await knex.transaction(async (trx) => {
      await trx('webhookDeliveries')
        .where({ id: row.id })
        .whereNull('completedAt')
        .update({
          status: willRetry ? 'retrying' : 'failed',
          attempts: trx.raw('greatest(attempts, ?)', [attempt]),
          responseStatus: status,
          lastError: error,
          lastAttemptAt: trx.fn.now(),
          updatedAt: trx.fn.now(),
        });
      if (gone) {
        await disableEndpoint(trx, row.endpointId, 'receiver_gone', {
          deliveryId: row.id,
          eventId: row.eventId,
          responseStatus: 410,
        });
      }
    });
    const record = { attempt, responseStatus: status, error, at: new Date().toISOString() };
    return { kind: gone ? 'gone' : willRetry ? 'retry' : 'failed', record };
  }

  /** The record of an attempt begun but not finished by an earlier, lost run of a batch activity. */
  async function lostAttempt(row: DeliveryRow): Promise<AttemptRecord> {
    if (row.status !== 'pending') return recordOf(row);
    const error = `attempt ${row.attempts}: no outcome recorded (the worker making it was lost)`;
    await knex('webhookDeliveries')
      .where({ id: row.id, status: 'pending' })
      .whereNull('completedAt')
      .update({ status: 'retrying', lastError: error, updatedAt: knex.fn.now() });
    return { ...recordOf(row), error, responseStatus: null };
  }

  /**
   * Makes `owner` the one workflow that may attempt the delivery: it must own it already, or nobody
   * does, or the workflow that hands it over (`previousOwner`). False when another workflow owns it.
   */
  async function claim(deliveryId: string, owner: string, previousOwner?: string): Promise<boolean> {
    const owners = previousOwner ? [owner, previousOwner] : [owner];
    const claimed = await knex('webhookDeliveries')
      .where({ id: deliveryId })
      .where((q) => q.whereNull('ownerWorkflowId').orWhereIn('ownerWorkflowId', owners))
      .update({ ownerWorkflowId: owner });
    return claimed > 0;
  }

  /**
   * The first attempt of one delivery of a batch, its outcome added to `result`; a failure that will be
   * retried is handed over at once (`handOver` starts the delivery's own workflow).
   */
  async function firstAttempt(
    row: DeliveryRow,
    result: FirstAttemptsResult,
    handOver: (attempt: AttemptRecord) => Promise<void>,
  ): Promise<void> {
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
      await retry(await lostAttempt(row));
      return;
    }
    // counted before it is sent, so a lost worker leaves a record of the attempt the receiver saw; the
    // same statement reads the endpoint as it is now (a 410, a disable or a rotation since the batch began)
    // and counts nothing when the endpoint is no longer active (nothing will be sent)
    const begun = await knex.raw<{ rows: Array<Pick<DeliveryRow, 'url' | 'active' | 'secretEncrypted'>> }>(
      `update webhook_deliveries d
          set attempts = case when e.active then 1 else d.attempts end,
              last_attempt_at = case when e.active then now() else d.last_attempt_at end,
              updated_at = now()
         from webhook_endpoints e
        where d.id = ? and d.attempts = 0 and d.completed_at is null and e.id = d.endpoint_id
    returning e.url, e.active, e.secret_encrypted as "secretEncrypted"`,
      [row.id],
    );
    if (begun.rows.length === 0) return;
    const outcome = await attemptOnce({ ...row, ...begun.rows[0] }, 1);
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
        await finishDelivery({ deliveryId: row.id, outcome: 'failed', error: null });
        result.failed++;
        add('failed', outcome.record.responseStatus);
        break;
      case 'inactive':
        await finishDelivery({ deliveryId: row.id, outcome: 'cancelled', error: outcome.message });
        result.cancelled++;
        add('cancelled', null);
        break;
    }
  }

  const activities = {
    /**
     * One attempt of a delivery's own workflow: reads the endpoint now (so a rotated secret or a disable
     * applies at once), signs the envelope, posts it and records the attempt. Throws to let Temporal's
     * retry policy decide what next. The attempt number counts the attempts made before this workflow.
     */
    async attemptWebhookDelivery(input: {
      deliveryId: string;
      attemptsDone?: number;
      handedOverBy?: string;
    }): Promise<AttemptResult> {
      const info = Context.current().info;
      const attempt = (input.attemptsDone ?? 0) + info.attempt;
      const owner = ownerOf(info);
      const row = await loadDelivery(input.deliveryId);
      if (!row) throw ApplicationFailure.nonRetryable('the delivery no longer exists', FAILURE.deliveryGone);
      if (!row.completedAt && !(await claim(row.id, owner, input.handedOverBy))) {
        // e.g. a batch of the start sweep took it first: that workflow attempts it, this one leaves it be
        throw ApplicationFailure.nonRetryable('another workflow owns the delivery', FAILURE.ownedElsewhere);
      }
      if (row.completedAt) {
        // finished by an earlier run of this attempt whose completion Temporal did not hear of
        if (row.status === 'succeeded') return { attempt: row.attempts, responseStatus: row.responseStatus };
        throw ApplicationFailure.nonRetryable(`the delivery is already ${row.status}`, FAILURE.deliveryGone);
      }
      const outcome = await attemptOnce(row, attempt);
      switch (outcome.kind) {
        case 'succeeded':
          return { attempt, responseStatus: outcome.responseStatus };
        case 'inactive':
          throw ApplicationFailure.nonRetryable(outcome.message, FAILURE.endpointInactive);
        case 'gone':
          throw ApplicationFailure.nonRetryable(outcome.record.error, FAILURE.receiverGone);
        case 'retry':
          await signalFailedAttempt(outcome.record);
          throw ApplicationFailure.retryable(outcome.record.error, FAILURE.attemptFailed);
        case 'failed':
          throw ApplicationFailure.retryable(outcome.record.error, FAILURE.attemptFailed);
      }
    },

    /**
     * The first attempt of each delivery of a batch, side by side (at most `FIRST_ATTEMPTS_IN_FLIGHT` at
     * once, `PER_ENDPOINT_IN_FLIGHT` to one endpoint), each recorded as it ends. Deliveries that succeed, or
     * end for good (410, endpoint disabled), are finished here; each one to retry is handed at
     * once to a workflow of its own, `webhook-delivery:<deliveryId>`, which waits the first delay and makes
     * attempts 2 to 5. Run again after a lost worker, it attempts only what is not attempted yet, hands over
     * again what was attempted (starting is idempotent), and reports what was finished before.
     */
    async deliverFirstAttempts(input: FirstAttemptsInput): Promise<FirstAttemptsResult> {
      const context = Context.current();
      const owner = ownerOf(context.info);
      const temporal = deps.temporal;
      if (!temporal) throw ApplicationFailure.nonRetryable('batches need a Temporal client to hand over');
      const policy = deliveryPolicy(config.webhooks);
      const correlation = new Map(input.deliveries.map((d) => [d.id, d.correlationId ?? null]));
      const heartbeat = setInterval(() => context.heartbeat(), 1_000);
      const result: FirstAttemptsResult = {
        succeeded: 0,
        failed: 0,
        cancelled: 0,
        retrying: [],
        outcomes: [],
      };
      const errors: unknown[] = [];
      try {
        const ids = input.deliveries.map((d) => d.id);
        await knex('webhookDeliveries')
          .whereIn('id', ids)
          .whereNull('completedAt')
          .whereNull('ownerWorkflowId')
          .update({ ownerWorkflowId: owner });
        const rows = await loadDeliveries(ids, owner);
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
              // one delivery's error (database, Temporal) does not stop the others; the run fails after
              await slots
                .run(() => firstAttempt(row, result, handOver))
                .catch((err: unknown) => {
                  errors.push(err);
                });
            }
          };
          for (let i = 0; i < Math.min(PER_ENDPOINT_IN_FLIGHT, queue.length); i++) lanes.push(lane());
        }
        await Promise.all(lanes);
      } finally {
        clearInterval(heartbeat);
      }
      if (errors.length > 0) {
        // run again: what was finished is reported, what was attempted is handed over (again), nothing
        // is sent twice
        logger.error({ err: errors[0], count: errors.length }, 'webhook batch: deliveries left unfinished');
        throw ApplicationFailure.retryable(
          `${errors.length} deliveries of the batch failed to finish: ${String(errors[0])}`,
        );
      }
      return result;
    },

    completeWebhookDelivery: finishDelivery,

    /** Removes delivery records older than 30 days, in batches (run by the retention Schedule). */
    async deleteExpiredWebhookDeliveries(): Promise<{ deleted: number }> {
      let deleted = 0;
      for (let batch = 0; batch < 10_000; batch++) {
        const result = await knex.raw<{ rowCount: number }>(
          `delete from webhook_deliveries where id in (
             select id from webhook_deliveries where created_at < now() - make_interval(days => ?) limit 1000)`,
          [WEBHOOK_DELIVERY_RETENTION_DAYS],
        );
        deleted += result.rowCount;
        Context.current().heartbeat({ deleted });
        if (result.rowCount < 1000) break;
      }
      if (deleted > 0) logger.info({ deleted }, 'expired webhook deliveries removed');
      return { deleted };
    },
  };
  return activities;
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;

/**
 * The outbox fan-out for webhooks. Inside the claiming transaction: one delivery record per active
 * endpoint of the event's company subscribed to its type (a `ping` goes to the pinged endpoint only);
 * the unique (event, endpoint) index makes a second run of the same batch create nothing. After commit:
 * start the first attempts, one batch workflow per company (see `webhookBatchWorkflow`).
 */
export function createWebhookFanOut(deps: {
  config: Config;
  knex: Knex;
  logger: Logger;
  temporal: Client;
  /** the client shares the worker's NativeConnection: workflows may start eagerly on this worker */
  eagerStart?: boolean;
}) {
  const { config, knex, logger, temporal } = deps;
  const eager = deps.eagerStart ?? false;

  async function start(deliveries: DeliveryToStart[]): Promise<void> {
    if (deliveries.length === 0) return;
    const { errors } = await startDeliveryBatches(temporal, knex, config, deliveries, { eager });
    // the deliveries stay unmarked; startLeftBehind retries them on a later dispatcher iteration
    if (errors.length > 0)
      logger.error({ err: errors[0], count: errors.length }, 'delivery workflow start failed');
  }

  const fanOut: FanOut = async (trx, events: OutboxEvent[]): Promise<AfterCommit[]> => {
    if (events.length === 0) return [];
    const payload = JSON.stringify(
      events.map((e) => ({
        id: e.id,
        company_id: e.companyId,
        type: e.type,
        data: e.data,
        created_at: new Date(e.createdAt).toISOString(),
      })),
    );
    const result = await trx.raw<{ rows: Array<{ id: string; companyId: string; eventId: string }> }>(
      `insert into webhook_deliveries (id, company_id, endpoint_id, event_id, event_type, event_data, event_created_at)
       select gen_random_uuid(), ev.company_id, e.id, ev.id, ev.type, ev.data, ev.created_at
         from jsonb_to_recordset(?::jsonb) as ev(id uuid, company_id uuid, type text, data jsonb, created_at timestamptz)
         join webhook_endpoints e on e.company_id = ev.company_id and e.active
          and case when ev.type = 'ping' then e.id::text = ev.data->>'endpointId'
                   else ev.type = any(e.events) end
       on conflict (event_id, endpoint_id) where redelivery_of is null do nothing
       returning id, company_id as "companyId", event_id as "eventId"`,
      [payload],
    );
    const correlation = new Map(events.map((e) => [e.id, e.correlationId]));
    const created = result.rows.map((r) => ({
      id: r.id,
      companyId: r.companyId,
      correlationId: correlation.get(r.eventId) ?? null,
    }));
    return created.length > 0 ? [() => start(created)] : [];
  };

  /** Starts workflows for deliveries committed but never marked started (a crash between commit and start). */
  async function startLeftBehind(graceMs = 5_000): Promise<number> {
    const rows = await knex('webhookDeliveries')
      .whereNull('workflowStartedAt')
      .whereNull('completedAt')
      .where('createdAt', '<', knex.raw(`now() - make_interval(secs => ?)`, [graceMs / 1000]))
      .orderBy('createdAt')
      .limit(500)
      .select<DeliveryToStart[]>('id', 'companyId');
    if (rows.length === 0) return 0;
    logger.warn({ count: rows.length }, 'starting delivery workflows left behind');
    const { started, errors } = await startDeliveryBatches(temporal, knex, config, rows, { eager });
    if (errors.length > 0)
      logger.error({ err: errors[0], count: errors.length }, 'delivery workflow start failed');
    return started;
  }

  return { fanOut, startLeftBehind };
}
