import {
  ActivityFailure,
  ApplicationFailure,
  defineQuery,
  defineSignal,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { FAILURE, WEBHOOK_MAX_ATTEMPTS, type DeliveryPolicy } from '../common/webhookPolicy';

export interface WebhookDeliveryInput {
  deliveryId: string;
  policy: DeliveryPolicy;
}

/** One attempt as operators see it in the workflow's history (a signal per failed attempt before the last). */
export interface AttemptRecord {
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  at: string;
}

export interface WebhookDeliveryResult {
  status: 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  responseStatus: number | null;
}

/** Sent by the attempt activity after each failed attempt that will be retried, so history shows it. */
export const attemptFailedSignal = defineSignal<[AttemptRecord]>('attemptFailed');
export const attemptsQuery = defineQuery<AttemptRecord[]>('attempts');

/**
 * One webhook delivery: at most 5 attempts in all, the delays between them grown by Temporal's activity
 * retry policy (no loop of our own). Each attempt reads the endpoint afresh (URL, active, current secret),
 * signs, posts and records itself. 410 and a disabled or deleted endpoint stop at once (non-retryable).
 * After a failure the delivery is finished (status, consecutive-failure count, automatic disable) by
 * `completeWebhookDelivery`, whose retries never give up, so the record always reaches a final status.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const attempts: AttemptRecord[] = [];
  setHandler(attemptFailedSignal, (record) => {
    attempts.push(record);
  });
  setHandler(attemptsQuery, () => attempts);

  const { policy } = input;
  const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({
    // the HTTP request has its own timeout (policy.attemptTimeoutMs); this one only catches a lost worker
    startToCloseTimeout: policy.attemptTimeoutMs + 5_000,
    retry: {
      maximumAttempts: WEBHOOK_MAX_ATTEMPTS,
      initialInterval: policy.initialIntervalMs,
      backoffCoefficient: policy.backoffCoefficient,
      maximumInterval: policy.maximumIntervalMs,
      nonRetryableErrorTypes: [FAILURE.receiverGone, FAILURE.endpointInactive, FAILURE.deliveryGone],
    },
  });
  const { completeWebhookDelivery } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

  try {
    const result = await attemptWebhookDelivery({ deliveryId: input.deliveryId });
    return { status: 'succeeded', attempts: result.attempt, responseStatus: result.responseStatus };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    const outcome =
      type === FAILURE.endpointInactive || type === FAILURE.deliveryGone ? 'cancelled' : 'failed';
    // an attempt that ended without recording itself (the worker was lost, a timeout, an unexpected error)
    const recorded = (Object.values(FAILURE) as Array<string | null | undefined>).includes(type);
    const error = recorded
      ? null
      : `the last attempt ended without recording: ${cause?.message ?? String(err)}`;
    const final = await completeWebhookDelivery({ deliveryId: input.deliveryId, outcome, error });
    return { status: outcome, attempts: final.attempts, responseStatus: final.responseStatus };
  }
}
