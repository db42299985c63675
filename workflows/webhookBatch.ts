import { ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import { TypedSearchAttributes, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { FirstAttemptOutcome, WebhookActivities } from '../activities/webhooks';
import type { DeliveryPolicy } from '../common/webhookPolicy';
import { COMPANY_ID, workflowId } from './shared';
import { webhookDeliveryWorkflow } from './webhookDelivery';

export interface WebhookBatchInput {
  companyId: string;
  deliveries: Array<{ id: string; correlationId?: string | null }>;
  policy: DeliveryPolicy;
}

export interface WebhookBatchResult {
  deliveries: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** the deliveries whose first attempt failed and which continue in a workflow of their own */
  retrying: string[];
  /** each delivery's first attempt: its status after it and the receiver's status code */
  outcomes: FirstAttemptOutcome[];
}

/**
 * The first attempt of a batch of one company's deliveries (those one dispatcher pass created): one
 * activity posts them side by side, each signed with its endpoint's current secret and recorded. A delivery
 * whose first attempt fails continues in `webhook-delivery:<deliveryId>`, a child workflow of its own that
 * makes attempts 2 to 5 under Temporal's retry policy and outlives this batch.
 *
 * Why batches: a workflow per delivery from the start costs the Temporal server a workflow's worth of work
 * for every delivery, and on the 2-core machine this service is sized for that caps delivery at about 40
 * to 60 per second with nothing else running. Batching the first attempt costs one workflow per dispatcher
 * pass and company, and keeps a workflow per delivery exactly where operators need one: where it fails.
 */
export async function webhookBatchWorkflow(input: WebhookBatchInput): Promise<WebhookBatchResult> {
  const { policy } = input;
  const { deliverFirstAttempts } = proxyActivities<WebhookActivities>({
    // posts run side by side, each with the attempt timeout; the heartbeat notices a lost worker
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: policy.attemptTimeoutMs + 5_000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  const result = await deliverFirstAttempts({ deliveryIds: input.deliveries.map((d) => d.id) });

  const batchId = workflowInfo().workflowId;
  const correlation = new Map(input.deliveries.map((d) => [d.id, d.correlationId ?? undefined]));
  await Promise.all(
    result.retry.map(async ({ deliveryId, attempt }) => {
      const correlationId = correlation.get(deliveryId);
      await startChild(webhookDeliveryWorkflow, {
        workflowId: workflowId('webhook-delivery', deliveryId),
        args: [{ deliveryId, policy, attemptsDone: 1, earlierAttempts: [attempt], handedOverBy: batchId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: new TypedSearchAttributes([{ key: COMPANY_ID, value: input.companyId }]),
        memo: correlationId ? { correlationId } : {},
      }).catch((err: unknown) => {
        // already running (or run): the delivery has its workflow
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      });
    }),
  );
  return {
    deliveries: input.deliveries.length,
    succeeded: result.succeeded,
    failed: result.failed,
    cancelled: result.cancelled,
    retrying: result.retry.map((r) => r.deliveryId),
    outcomes: result.outcomes,
  };
}
