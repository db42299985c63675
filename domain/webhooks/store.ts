/**
 * The delivery store: delivery records as the worker reads and writes them — loading with their endpoint,
 * ownership claims (one workflow attempts a delivery), recording attempts and final outcomes, the sweep of
 * deliveries left unstarted and the 30-day retention. The API's own reads and writes of deliveries go
 * through the models (deliveries.ts).
 */
import type { Knex } from 'knex';
import type { Logger } from '../../common/logger';
import type { AttemptRecord } from '../../workflows/definitions/webhooks';
import { WEBHOOK_DELIVERY_RETENTION_DAYS } from './policy';
import { countFailedDelivery, disableAutomatically } from './state';
import { deleteInBatches, deleteOlderThan } from '../../db/retention';

/** A delivery with what an attempt needs of its endpoint. */
export interface DeliveryRow {
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

export interface CompleteInput {
  deliveryId: string;
  outcome: 'failed' | 'cancelled';
  /** set when the attempt could not record its own error (e.g. the worker was lost) */
  error: string | null;
}

/** A recorded attempt read back from the delivery row. */
export function recordOf(row: DeliveryRow): AttemptRecord {
  return {
    attempt: row.attempts,
    responseStatus: row.responseStatus,
    error: row.lastError,
    at: new Date(row.lastAttemptAt ?? Date.now()).toISOString(),
  };
}

const DELIVERY_COLUMNS = [
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

export function createDeliveryStore(deps: { knex: Knex; logger: Logger }) {
  const { knex, logger } = deps;

  /** `beginAttempt`; `firstOnly`: only a delivery not attempted yet (a batch run again skips the others). */
  async function begin(
    deliveryId: string,
    attempt: number,
    firstOnly: boolean,
  ): Promise<Pick<DeliveryRow, 'url' | 'active' | 'secretEncrypted'> | undefined> {
    const begun = await knex.raw<{ rows: Array<Pick<DeliveryRow, 'url' | 'active' | 'secretEncrypted'>> }>(
      `update webhook_deliveries d
          set attempts = case when e.active then greatest(d.attempts, ?) else d.attempts end,
              response_status = case when e.active then null else d.response_status end,
              last_attempt_at = case when e.active then now() else d.last_attempt_at end,
              updated_at = now()
         from webhook_endpoints e
        where d.id = ? and d.completed_at is null and e.id = d.endpoint_id
          ${firstOnly ? 'and d.attempts = 0' : ''}
    returning e.url, e.active, e.secret_encrypted as "secretEncrypted"`,
      [attempt, deliveryId],
    );
    return begun.rows[0];
  }

  function deliveriesWithEndpoints() {
    // a delivery cannot outlive its endpoint (the foreign key cascades): an inner join
    return knex('webhookDeliveries as d').join('webhookEndpoints as e', 'e.id', 'd.endpointId');
  }

  return {
    async load(deliveryId: string): Promise<DeliveryRow | undefined> {
      return deliveriesWithEndpoints()
        .where('d.id', deliveryId)
        .first<DeliveryRow | undefined>(DELIVERY_COLUMNS);
    },

    /**
     * The deliveries among `ids` that `owner` owns, in creation order, so a batch posts them in the order
     * their events were committed.
     */
    async loadOwned(ids: string[], owner: string): Promise<DeliveryRow[]> {
      if (ids.length === 0) return [];
      return deliveriesWithEndpoints()
        .whereIn('d.id', ids)
        .where('d.ownerWorkflowId', owner)
        .orderBy([{ column: 'd.createdAt' }, { column: 'd.id' }])
        .select<DeliveryRow[]>(DELIVERY_COLUMNS);
    },

    /**
     * Makes `owner` the one workflow that may attempt the delivery: it must own it already, or nobody
     * does, or the workflow that hands it over (`previousOwner`). False when another workflow owns it.
     */
    async claim(deliveryId: string, owner: string, previousOwner?: string): Promise<boolean> {
      const owners = previousOwner ? [owner, previousOwner] : [owner];
      const claimed = await knex('webhookDeliveries')
        .where({ id: deliveryId })
        .where((q) => q.whereNull('ownerWorkflowId').orWhereIn('ownerWorkflowId', owners))
        .update({ ownerWorkflowId: owner });
      return claimed > 0;
    },

    /** Makes `owner` the owner of those of `ids` that are unfinished and owned by nobody (a batch's claim). */
    async claimUnowned(ids: string[], owner: string): Promise<void> {
      await knex('webhookDeliveries')
        .whereIn('id', ids)
        .whereNull('completedAt')
        .whereNull('ownerWorkflowId')
        .update({ ownerWorkflowId: owner });
    },

    /**
     * Counts a batch's first attempt before it is sent (`beginAttempt`); undefined when the delivery was
     * attempted or finished already.
     */
    beginFirstAttempt(
      deliveryId: string,
    ): Promise<Pick<DeliveryRow, 'url' | 'active' | 'secretEncrypted'> | undefined> {
      return begin(deliveryId, 1, true);
    },

    /**
     * Counts attempt number `attempt` before it is sent, so a lost worker leaves a record of the attempt the
     * receiver saw (its answer, not known yet, is `null`); the same statement reads the endpoint as it is
     * now (a 410, a disable or a rotation since the delivery began) and counts nothing when the endpoint is
     * no longer active (nothing will be sent). Undefined when the delivery is finished (or gone).
     */
    beginAttempt(
      deliveryId: string,
      attempt: number,
    ): Promise<Pick<DeliveryRow, 'url' | 'active' | 'secretEncrypted'> | undefined> {
      return begin(deliveryId, attempt, false);
    },

    /** A 2xx: the delivery succeeded, and its endpoint's failures in a row go back to 0 (one statement). */
    async recordSucceeded(deliveryId: string, attempt: number, responseStatus: number): Promise<void> {
      await knex.raw(
        `with d as (
           update webhook_deliveries
              set status = 'succeeded', attempts = greatest(attempts, ?), response_status = ?,
                  last_attempt_at = now(), completed_at = now(), updated_at = now()
            where id = ? and completed_at is null
        returning endpoint_id)
         update webhook_endpoints e set consecutive_failures = 0
           from d where e.id = d.endpoint_id and e.consecutive_failures <> 0`,
        [attempt, responseStatus, deliveryId],
      );
    },

    /**
     * A failed attempt: `retrying` when attempts remain. A final one (a 410, or the last attempt) finishes
     * the delivery as `failed` in the same transaction — status, `completed_at`, one more failure in a row for
     * the endpoint and, for a 410 (`gone`), the endpoint's disable — so a worker lost right after it cannot
     * leave a final answer unfinished (a later attempt would find the endpoint disabled and cancel it).
     */
    async recordFailed(
      row: DeliveryRow,
      attempt: {
        attempt: number;
        responseStatus: number | null;
        error: string;
        willRetry: boolean;
        gone: boolean;
      },
    ): Promise<void> {
      await knex.transaction(async (trx) => {
        const recorded = await trx('webhookDeliveries')
          .where({ id: row.id })
          .whereNull('completedAt')
          .update({
            status: attempt.willRetry ? 'retrying' : 'failed',
            attempts: trx.raw('greatest(attempts, ?)', [attempt.attempt]),
            responseStatus: attempt.responseStatus,
            lastError: attempt.error,
            lastAttemptAt: trx.fn.now(),
            updatedAt: trx.fn.now(),
            ...(attempt.willRetry ? {} : { completedAt: trx.fn.now() }),
          });
        if (attempt.gone) {
          await disableAutomatically(
            trx,
            logger,
            { id: row.endpointId, companyId: row.companyId },
            'receiver_gone',
            {
              deliveryId: row.id,
              eventId: row.eventId,
              responseStatus: 410,
            },
          );
        }
        if (!attempt.willRetry && recorded > 0) {
          await countFailedDelivery(trx, logger, row.endpointId, {
            lastDeliveryId: row.id,
            eventId: row.eventId,
          });
        }
      });
    },

    /** The record of an attempt begun but not finished by an earlier, lost run of a batch activity. */
    async recordLost(row: DeliveryRow): Promise<AttemptRecord> {
      if (row.status !== 'pending') return recordOf(row);
      const error = `attempt ${row.attempts}: no outcome recorded (the worker making it was lost)`;
      await knex('webhookDeliveries')
        .where({ id: row.id, status: 'pending' })
        .whereNull('completedAt')
        .update({ status: 'retrying', lastError: error, updatedAt: knex.fn.now() });
      return { ...recordOf(row), error, responseStatus: null };
    },

    /**
     * Finishes a delivery that did not succeed, once: `completed_at` guards it, so a retried call changes
     * nothing (nor does a call for a delivery `recordFailed` finished). A failed delivery counts one more
     * failure in a row for its endpoint (state.ts).
     */
    async finish(input: CompleteInput): Promise<{ attempts: number; responseStatus: number | null }> {
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
          await countFailedDelivery(trx, logger, delivery.endpointId, {
            lastDeliveryId: input.deliveryId,
            eventId: delivery.eventId,
          });
        }
        return { attempts: delivery.attempts, responseStatus: delivery.responseStatus };
      });
    },

    /** Deliveries committed but never marked started (a crash between commit and start), oldest first. */
    async leftBehind(graceMs: number): Promise<Array<{ id: string; companyId: string }>> {
      return knex('webhookDeliveries')
        .whereNull('workflowStartedAt')
        .whereNull('completedAt')
        .where('createdAt', '<', knex.raw(`now() - make_interval(secs => ?)`, [graceMs / 1000]))
        .orderBy('createdAt')
        .limit(500)
        .select<Array<{ id: string; companyId: string }>>('id', 'companyId');
    },

    /** Removes delivery records older than 30 days, 1,000 at a time; `progress` after each batch. */
    deleteExpired(progress: (deleted: number) => void): Promise<number> {
      return deleteInBatches(
        deleteOlderThan(knex, 'webhook_deliveries', WEBHOOK_DELIVERY_RETENTION_DAYS),
        progress,
      );
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
