/**
 * Starting delivery workflows. The outbox fan-out (worker) starts batches: one `webhook-batch` workflow
 * per company and dispatcher pass makes the first attempts, and hands each delivery that fails to a
 * `webhook-delivery:<deliveryId>` workflow. A redelivery (API) starts its `webhook-delivery` workflow
 * directly. Ids derive from delivery ids, so starting twice is harmless: a running workflow is reused, a
 * finished one is not started again, and a delivery is attempted only by the workflow that owns it. A
 * delivery is marked started only after Temporal accepted it; the dispatcher starts any left unmarked (a
 * crash between commit and start) in a batch.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from 'knex';
import type { Config } from './config';
import { deliveryPolicy, type DeliveryPolicy } from './webhookPolicy';
import { workflowIdentity } from '../workflows/shared';
import type { AttemptRecord, webhookDeliveryWorkflow } from '../workflows/webhookDelivery';
import type { webhookBatchWorkflow } from '../workflows/webhookBatch';

export interface DeliveryToStart {
  id: string;
  companyId: string;
  correlationId?: string | null;
}

const PARALLEL_STARTS = 32;
/** At most this many deliveries in one batch workflow (its input and result stay small). */
const BATCH_MAX = 500;

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
  await markStarted(knex, started);
  return { started: started.length, errors };
}

/**
 * Starts the first attempts of fresh deliveries: one `webhook-batch:<first delivery id>` workflow per
 * company (and per BATCH_MAX deliveries), carrying that company's `CompanyId`, then marks them started.
 */
export async function startDeliveryBatches(
  client: Client,
  knex: Knex,
  config: Config,
  deliveries: readonly DeliveryToStart[],
  options: { eager?: boolean } = {},
): Promise<{ started: number; errors: unknown[] }> {
  const policy = deliveryPolicy(config.webhooks);
  const byCompany = new Map<string, DeliveryToStart[]>();
  for (const d of deliveries) {
    const list = byCompany.get(d.companyId) ?? [];
    list.push(d);
    byCompany.set(d.companyId, list);
  }
  const batches: DeliveryToStart[][] = [];
  for (const list of byCompany.values())
    for (let i = 0; i < list.length; i += BATCH_MAX) batches.push(list.slice(i, i + BATCH_MAX));

  const started: string[] = [];
  const errors: unknown[] = [];
  for (let i = 0; i < batches.length; i += PARALLEL_STARTS) {
    const results = await Promise.allSettled(
      batches.slice(i, i + PARALLEL_STARTS).map(async (batch) => {
        try {
          await client.workflow.start<typeof webhookBatchWorkflow>('webhookBatchWorkflow', {
            ...workflowIdentity({
              kind: 'webhook-batch',
              parts: [batch[0].id],
              companyId: batch[0].companyId,
              taskQueue: config.temporal.taskQueue,
            }),
            args: [
              {
                companyId: batch[0].companyId,
                deliveries: batch.map((d) => ({ id: d.id, correlationId: d.correlationId ?? null })),
                policy,
              },
            ],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            ...(options.eager ? { requestEagerStart: true } : {}),
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
        return batch.map((d) => d.id);
      }),
    );
    for (const r of results) {
      if (r.status === 'fulfilled') started.push(...r.value);
      else errors.push(r.reason);
    }
  }
  await markStarted(knex, started);
  return { started: started.length, errors };
}

async function markStarted(knex: Knex, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await knex('webhookDeliveries')
    .whereIn('id', ids)
    .whereNull('workflowStartedAt')
    .update({ workflowStartedAt: knex.fn.now() });
}

/**
 * Hands a delivery whose first attempt (in a batch) failed to its own workflow, which waits the first delay
 * and makes attempts 2 to 5. Idempotent: a running one is reused, a finished one is not started again.
 */
export async function startDeliveryRetry(
  client: Client,
  config: Config,
  params: {
    deliveryId: string;
    companyId: string;
    correlationId: string | null;
    policy: DeliveryPolicy;
    attempt: AttemptRecord;
    handedOverBy: string;
  },
): Promise<void> {
  try {
    await client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      ...workflowIdentity({
        kind: 'webhook-delivery',
        parts: [params.deliveryId],
        companyId: params.companyId,
        taskQueue: config.temporal.taskQueue,
        correlationId: params.correlationId ?? undefined,
      }),
      args: [
        {
          deliveryId: params.deliveryId,
          policy: params.policy,
          attemptsDone: 1,
          earlierAttempts: [params.attempt],
          handedOverBy: params.handedOverBy,
        },
      ],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
