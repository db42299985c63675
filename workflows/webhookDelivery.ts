import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { holdWaits } from './holdWait';
import {
  attemptFailedSignal,
  attemptsQuery,
  FAILURE,
  holdDelayMs,
  retryDelaysMs,
  WEBHOOK_MAX_ATTEMPTS,
  type AttemptRecord,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
} from './definitions/webhooks';

/**
 * One webhook delivery's attempts: at most 5 in all, the delays between them grown by Temporal's activity
 * retry policy (no loop of our own). Each attempt reads the endpoint afresh (URL, active, current secret),
 * signs, posts and records itself. 410 and a disabled or deleted endpoint stop at once (non-retryable).
 * After a failure the delivery is finished (status, consecutive-failure count, automatic disable) by
 * `completeWebhookDelivery`, whose retries never give up, so the record always reaches a final status.
 *
 * Started by a delivery batch for a delivery whose first attempt failed (`attemptsDone` 1: a durable
 * timer waits the first delay, then the retry policy covers attempts 2 to 5 with the later delays), and
 * by the API for a redelivery (all 5 attempts here).
 *
 * While the company is suspended an attempt is not made ("held", README "Billing"): the workflow waits on a
 * durable timer (`holdDelayMs`, growing to 30 minutes), or until `companyReactivatedSignal` wakes it, and tries
 * again, with the attempts that remained, once the company is active again. A delivery record removed by
 * retention (30 days) ends it as `cancelled`.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const attempts: AttemptRecord[] = [...(input.earlierAttempts ?? [])];
  setHandler(attemptFailedSignal, (record) => {
    attempts.push(record);
  });
  setHandler(attemptsQuery, () => attempts);
  const hold = holdWaits();

  const { policy } = input;
  const attemptsDone = Math.min(Math.max(input.attemptsDone ?? 0, 0), WEBHOOK_MAX_ATTEMPTS - 1);
  const delays = retryDelaysMs(policy);
  if (attemptsDone > 0) await sleep(delays[attemptsDone - 1]);
  // attempts after `done` were made: the retry policy makes the remaining ones with the remaining delays
  const attemptsAfter = (done: number) =>
    proxyActivities<WebhookActivities>({
      // the HTTP request has its own timeout (policy.attemptTimeoutMs); this one only catches a lost worker
      startToCloseTimeout: policy.attemptTimeoutMs + 5_000,
      retry: {
        maximumAttempts: WEBHOOK_MAX_ATTEMPTS - done,
        initialInterval: done > 0 ? delays[done] : policy.initialIntervalMs,
        backoffCoefficient: policy.backoffCoefficient,
        maximumInterval: policy.maximumIntervalMs,
        nonRetryableErrorTypes: [
          FAILURE.receiverGone,
          FAILURE.endpointInactive,
          FAILURE.deliveryGone,
          FAILURE.ownedElsewhere,
        ],
      },
    }).attemptWebhookDelivery;
  const { completeWebhookDelivery } = proxyActivities<WebhookActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

  try {
    hold.checking();
    let result = await attemptsAfter(attemptsDone)({
      deliveryId: input.deliveryId,
      attemptsDone,
      handedOverBy: input.handedOverBy,
    });
    // held (the company is suspended): nothing was sent; wait, then the attempt that was held and the rest.
    // Histories from before holds existed never carry a held result, so they replay unchanged.
    for (let held = 0; result.held; held++) {
      await hold.wait(holdDelayMs(policy, held));
      const done = result.attempt - 1;
      hold.checking();
      result = await attemptsAfter(done)({
        deliveryId: input.deliveryId,
        attemptsDone: done,
        handedOverBy: input.handedOverBy,
      });
    }
    return { status: 'succeeded', attempts: result.attempt, responseStatus: result.responseStatus };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    if (type === FAILURE.ownedElsewhere)
      return { status: 'owned-elsewhere', attempts: 0, responseStatus: null };
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
