/**
 * Starting delivery workflows, shared by the outbox fan-out (worker) and redelivery and ping (API).
 * The workflow id derives from the delivery id, so starting twice is harmless: a running workflow is
 * reused, a finished one is not started again. A delivery is marked started only after Temporal accepted
 * it; the dispatcher starts any delivery left unmarked (a crash between commit and start).
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from 'knex';
import type { Config } from './config';
import { deliveryPolicy } from './webhookPolicy';
import { workflowIdentity } from '../workflows/shared';
import type { webhookDeliveryWorkflow } from '../workflows/webhookDelivery';

export interface DeliveryToStart {
  id: string;
  companyId: string;
  correlationId?: string | null;
}

const PARALLEL_STARTS = 32;

export function deliveryWorkflowId(deliveryId: string): string {
  return `webhook-delivery:${deliveryId}`;
}

export async function startDeliveryWorkflows(
  client: Client,
  knex: Knex,
  config: Config,
  deliveries: readonly DeliveryToStart[],
  options: {
    /**
     * Eager start: the server hands the first workflow task straight back to this process's worker (one
     * round trip less). Only for a client that shares the worker's NativeConnection (the fan-out).
     */
    eager?: boolean;
  } = {},
): Promise<{ started: number; errors: unknown[] }> {
  const policy = deliveryPolicy(config.webhooks);
  const started: string[] = [];
  const errors: unknown[] = [];
  for (let i = 0; i < deliveries.length; i += PARALLEL_STARTS) {
    const chunk = deliveries.slice(i, i + PARALLEL_STARTS);
    const results = await Promise.allSettled(
      chunk.map(async (d) => {
        try {
          await client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
            ...workflowIdentity({
              kind: 'webhook-delivery',
              parts: [d.id],
              companyId: d.companyId,
              taskQueue: config.temporal.taskQueue,
              correlationId: d.correlationId ?? undefined,
            }),
            args: [{ deliveryId: d.id, policy }],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            ...(options.eager ? { requestEagerStart: true } : {}),
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
        return d.id;
      }),
    );
    for (const r of results) {
      if (r.status === 'fulfilled') started.push(r.value);
      else errors.push(r.reason);
    }
  }
  if (started.length > 0) {
    await knex('webhookDeliveries')
      .whereIn('id', started)
      .whereNull('workflowStartedAt')
      .update({ workflowStartedAt: knex.fn.now() });
  }
  return { started: started.length, errors };
}
