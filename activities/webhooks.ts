/**
 * The webhook activities: thin adapters from Temporal to the webhooks domain (domain/webhooks/). They read
 * the workflow that runs them (the owner of the deliveries), heartbeat, signal failed attempts into the
 * delivery workflow's history, and turn the domain's outcomes into results or Temporal failures.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { attemptForWorkflow, createAttempter } from '../domain/webhooks/attempt';
import {
  deliverFirstAttempts,
  type FirstAttemptsInput,
  type FirstAttemptsResult,
} from '../domain/webhooks/batch';
import { deliverySuspended, suspensionCheck } from '../domain/webhooks/hold';
import { FAILURE } from '../domain/webhooks/policy';
import type { WebhookSender } from '../domain/webhooks/sender';
import { createDeliveryStore, type CompleteInput } from '../domain/webhooks/store';
import type { Resolver } from '../domain/webhooks/targets';
import { attemptFailedSignal, type AttemptRecord } from '../workflows/definitions/webhooks';

export { createWebhookFanOut } from '../domain/webhooks/fanOut';

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
  /** the company is suspended: attempt `attempt` was not made (nothing sent, nothing recorded) */
  held?: boolean;
}

/** The workflow an activity runs for: the one that owns the deliveries it attempts. */
function ownerOf(info: { workflowExecution?: { workflowId: string } }): string {
  const id = info.workflowExecution?.workflowId;
  if (!id) throw ApplicationFailure.nonRetryable('webhook attempts run inside a workflow only');
  return id;
}

export function createWebhookActivities(deps: WebhookDeps) {
  const { knex, logger, config } = deps;
  const store = createDeliveryStore({ knex, logger });
  const attempter = createAttempter({ config, store, resolver: deps.resolver, sender: deps.sender });

  async function signalFailedAttempt(record: AttemptRecord): Promise<void> {
    if (!deps.temporal) return;
    try {
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      if (workflowId) await deps.temporal.workflow.getHandle(workflowId).signal(attemptFailedSignal, record);
    } catch (err) {
      logger.debug({ err }, 'could not signal the failed attempt into workflow history');
    }
  }

  return {
    /**
     * One attempt of a delivery's own workflow (domain/webhooks/attempt.ts). Throws to let Temporal's retry
     * policy decide what next. The attempt number counts the attempts made before this workflow.
     */
    async attemptWebhookDelivery(input: {
      deliveryId: string;
      attemptsDone?: number;
      handedOverBy?: string;
    }): Promise<AttemptResult> {
      const info = Context.current().info;
      const attempt = (input.attemptsDone ?? 0) + info.attempt;
      // a suspended company's delivery waits (README "Billing"): the workflow checks again later
      if (await deliverySuspended(knex, input.deliveryId))
        return { attempt, responseStatus: null, held: true };
      const outcome = await attemptForWorkflow(store, attempter, {
        deliveryId: input.deliveryId,
        attempt,
        owner: ownerOf(info),
        handedOverBy: input.handedOverBy,
      });
      switch (outcome.kind) {
        case 'missing':
          throw ApplicationFailure.nonRetryable('the delivery no longer exists', FAILURE.deliveryGone);
        case 'owned-elsewhere':
          // e.g. a batch of the start sweep took it first: that workflow attempts it, this one leaves it be
          throw ApplicationFailure.nonRetryable('another workflow owns the delivery', FAILURE.ownedElsewhere);
        case 'finished':
          if (outcome.status === 'succeeded')
            return { attempt: outcome.attempts, responseStatus: outcome.responseStatus };
          // e.g. a 410 recorded (and the delivery finished with it) by a run whose worker was lost: the
          // workflow ends as the record says, failed or cancelled
          throw ApplicationFailure.nonRetryable(
            `the delivery is already ${outcome.status}`,
            outcome.status === 'failed' ? FAILURE.attemptFailed : FAILURE.deliveryGone,
          );
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
     * The first attempts of a batch, side by side (domain/webhooks/batch.ts), heartbeating. When some
     * deliveries could not be finished it fails, to run again: what was finished is reported, what was
     * attempted is handed over (again), nothing is sent twice.
     */
    async deliverFirstAttempts(input: FirstAttemptsInput): Promise<FirstAttemptsResult> {
      const context = Context.current();
      const owner = ownerOf(context.info);
      const temporal = deps.temporal;
      if (!temporal) throw ApplicationFailure.nonRetryable('batches need a Temporal client to hand over');
      const heartbeat = setInterval(() => context.heartbeat(), 1_000);
      let outcome: Awaited<ReturnType<typeof deliverFirstAttempts>>;
      try {
        outcome = await deliverFirstAttempts(
          { config, store, attempter, temporal, suspended: suspensionCheck(knex, input.companyId) },
          input,
          owner,
        );
      } finally {
        clearInterval(heartbeat);
      }
      const { result, errors } = outcome;
      if (errors.length > 0) {
        logger.error({ err: errors[0], count: errors.length }, 'webhook batch: deliveries left unfinished');
        throw ApplicationFailure.retryable(
          `${errors.length} deliveries of the batch failed to finish: ${String(errors[0])}`,
        );
      }
      return result;
    },

    /** Finishes a delivery that did not succeed (status, failures in a row, automatic disable); idempotent. */
    async completeWebhookDelivery(input: CompleteInput) {
      return store.finish(input);
    },

    /** Removes delivery records older than 30 days, in batches (run by the retention Schedule). */
    async deleteExpiredWebhookDeliveries(): Promise<{ deleted: number }> {
      const deleted = await store.deleteExpired((count) => Context.current().heartbeat({ deleted: count }));
      if (deleted > 0) logger.info({ deleted }, 'expired webhook deliveries removed');
      return { deleted };
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
