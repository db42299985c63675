import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { holdDelayMs, type WebhookBatchInput, type WebhookBatchResult } from './definitions/webhooks';
import { holdWaits } from './holdWait';

/**
 * The first attempt of a batch of one company's deliveries (those one dispatcher pass created): one
 * activity posts them side by side, each signed with its endpoint's current secret and recorded. A delivery
 * whose first attempt fails is handed over at once to `webhook-delivery:<deliveryId>`, a workflow of its
 * own that waits the first delay and makes attempts 2 to 5 under Temporal's retry policy.
 *
 * Deliveries held because the company is suspended (README "Billing") are not attempted: the workflow waits
 * on a durable timer (`holdDelayMs`), or until `companyReactivatedSignal` wakes it, and runs the activity again
 * for them until the company is active again (or their records are gone, after 30 days).
 *
 * Why batches: a workflow per delivery from the start costs the Temporal server a workflow's worth of work
 * for every delivery, and on the 2-core machine this service is sized for that caps delivery at about 40
 * to 60 per second with nothing else running. Batching the first attempt costs one workflow per dispatcher
 * pass and company, and keeps a workflow per delivery exactly where operators need one: where it fails.
 */
export async function webhookBatchWorkflow(input: WebhookBatchInput): Promise<WebhookBatchResult> {
  const { deliverFirstAttempts } = proxyActivities<WebhookActivities>({
    // posts run side by side, each with the attempt timeout; the heartbeat notices a lost worker
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: input.policy.attemptTimeoutMs + 5_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  const hold = holdWaits();
  hold.checking();
  const { held, ...result } = await deliverFirstAttempts({
    companyId: input.companyId,
    deliveries: input.deliveries,
  });
  // histories from before holds existed never carry `held`, so they replay unchanged
  for (let n = 0, waiting = held ?? []; waiting.length > 0; n++) {
    await hold.wait(holdDelayMs(input.policy, n));
    const ids = new Set(waiting);
    hold.checking();
    const next = await deliverFirstAttempts({
      companyId: input.companyId,
      deliveries: input.deliveries.filter((d) => ids.has(d.id)),
    });
    result.succeeded += next.succeeded;
    result.failed += next.failed;
    result.cancelled += next.cancelled;
    result.retrying.push(...next.retrying);
    result.outcomes.push(...next.outcomes);
    waiting = next.held ?? [];
  }
  return { deliveries: input.deliveries.length, ...result };
}
