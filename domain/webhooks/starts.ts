/**
 * Starting delivery workflows. The outbox fan-out (worker) starts batches: one `webhook-batch` workflow
 * per company and dispatcher pass makes the first attempts, and hands each delivery that fails to a
 * `webhook-delivery:<deliveryId>` workflow. A redelivery (API) starts its `webhook-delivery` workflow
 * directly. Ids derive from delivery ids — a batch's from all of its deliveries — so starting twice is
 * harmless: a running workflow is reused, a finished one is not started again, and a delivery is attempted
 * only by the workflow that owns it. A delivery is marked started only after Temporal accepted a workflow
 * whose input holds it; the dispatcher starts any left unmarked (a crash between commit and start) in a batch.
 */
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Knex } from 'knex';
import type { Config } from '../../common/config';
import { deliveryPolicy, type DeliveryPolicy } from './policy';
import { workflowIdentity } from '../../workflows/shared';
import {
  batchWorkflowId,
  WEBHOOK_BATCH_WORKFLOW,
  WEBHOOK_DELIVERY_WORKFLOW,
  type AttemptRecord,
  type WebhookBatchInput,
  type WebhookDeliveryInput,
} from '../../workflows/definitions/webhooks';

export interface DeliveryToStart {
  id: string;
  companyId: string;
  correlationId?: string | null;
}

const PARALLEL_STARTS = 32;
/** At most this many deliveries in one batch workflow (its input and result stay small). */
const BATCH_MAX = 500;

interface StartOptions {
  /**
   * Eager start: the server hands the first workflow task straight back to this process's worker (one
   * round trip less). Only for a client that shares the worker's NativeConnection (the fan-out).
   */
  eager?: boolean;
  /** A closed workflow of the same id is run again (a hand-over: see `startDeliveryRetry`). */
  rerunClosed?: boolean;
}

/**
 * Starts a webhook workflow whose id names its deliveries: a running one is reused (`USE_EXISTING`), a
 * finished one is not run again (`REJECT_DUPLICATE`, its error swallowed) unless `rerunClosed`.
 */
async function startOnce(
  client: Client,
  config: Config,
  workflow:
    | { type: typeof WEBHOOK_BATCH_WORKFLOW; args: [WebhookBatchInput] }
    | { type: typeof WEBHOOK_DELIVERY_WORKFLOW; args: [WebhookDeliveryInput] },
  identity: {
    kind: 'webhook-batch' | 'webhook-delivery';
    parts: string[];
    companyId: string;
    correlationId?: string | null;
  },
  options: StartOptions = {},
): Promise<void> {
  try {
    await client.workflow.start(workflow.type, {
      ...workflowIdentity({
        kind: identity.kind,
        parts: identity.parts,
        companyId: identity.companyId,
        taskQueue: config.temporal.taskQueue,
        correlationId: identity.correlationId ?? undefined,
      }),
      args: workflow.args,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: options.rerunClosed
        ? WorkflowIdReusePolicy.ALLOW_DUPLICATE
        : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      ...(options.eager ? { requestEagerStart: true } : {}),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** Runs `start` for each group, PARALLEL_STARTS at a time; marks the deliveries of the started ones. */
async function startGroups(
  knex: Knex,
  groups: readonly DeliveryToStart[][],
  start: (group: DeliveryToStart[]) => Promise<void>,
): Promise<{ started: number; errors: unknown[] }> {
  const started: string[] = [];
  const errors: unknown[] = [];
  for (let i = 0; i < groups.length; i += PARALLEL_STARTS) {
    const chunk = groups.slice(i, i + PARALLEL_STARTS);
    const results = await Promise.allSettled(chunk.map(start));
    results.forEach((r, k) => {
      if (r.status === 'fulfilled') started.push(...chunk[k].map((d) => d.id));
      else errors.push(r.reason);
    });
  }
  if (started.length > 0) {
    await knex('webhookDeliveries')
      .whereIn('id', started)
      .whereNull('workflowStartedAt')
      .update({ workflowStartedAt: knex.fn.now() });
  }
  return { started: started.length, errors };
}

/** Starts each delivery's own workflow (all 5 attempts there): redelivery and ping. */
export async function startDeliveryWorkflows(
  client: Client,
  knex: Knex,
  config: Config,
  deliveries: readonly DeliveryToStart[],
): Promise<{ started: number; errors: unknown[] }> {
  const policy = deliveryPolicy(config.webhooks);
  return startGroups(
    knex,
    deliveries.map((d) => [d]),
    ([d]) =>
      startOnce(
        client,
        config,
        { type: WEBHOOK_DELIVERY_WORKFLOW, args: [{ deliveryId: d.id, policy }] },
        { kind: 'webhook-delivery', parts: [d.id], companyId: d.companyId, correlationId: d.correlationId },
      ),
  );
}

/**
 * The id parts of the batch of these deliveries: the lowest of their ids, then a digest of all of them, so
 * the same group gives the same id in any order. The id must name the whole group: the sweep regroups
 * deliveries left unmarked, and a group that reused the id of an existing batch holding fewer of them
 * would mark the others started with no workflow ever attempting them.
 */
function batchIdParts(deliveryIds: readonly string[]): [string, string] {
  const sorted = [...deliveryIds].sort();
  const digest = createHash('sha256').update(sorted.join(',')).digest('hex').slice(0, 16);
  return [sorted[0], digest];
}

/** `webhook-batch:<lowest delivery id>:<digest of all its delivery ids>` (operators, tests). */
export function batchWorkflowIdOf(deliveryIds: readonly string[]): string {
  return batchWorkflowId(...batchIdParts(deliveryIds));
}

/**
 * Starts the first attempts of fresh deliveries: one `webhook-batch` workflow per company (and per
 * BATCH_MAX deliveries), its id naming all of its deliveries (`batchWorkflowIdOf`), carrying that
 * company's `CompanyId`, then marks them started.
 */
export async function startDeliveryBatches(
  client: Client,
  knex: Knex,
  config: Config,
  deliveries: readonly DeliveryToStart[],
  options: StartOptions = {},
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
  return startGroups(knex, batches, (batch) =>
    startOnce(
      client,
      config,
      {
        type: WEBHOOK_BATCH_WORKFLOW,
        args: [
          {
            companyId: batch[0].companyId,
            deliveries: batch.map((d) => ({ id: d.id, correlationId: d.correlationId ?? null })),
            policy,
          },
        ],
      },
      {
        kind: 'webhook-batch',
        parts: batchIdParts(batch.map((d) => d.id)),
        companyId: batch[0].companyId,
      },
      options,
    ),
  );
}

/**
 * Hands a delivery whose first attempt (in a batch) failed to its own workflow, which waits the first delay
 * and makes attempts 2 to 5. A running one is reused. A closed one is run again: the batch owns the delivery
 * and hands it over only while it is unfinished, so a closed `webhook-delivery:<id>` did not take it over
 * (e.g. a redelivery's own start that reached the server late ended as `owned-elsewhere` because the sweep's
 * batch owned the delivery); rejecting the start would leave the delivery `retrying` with nothing retrying
 * it. A run that finds the delivery finished meanwhile sends nothing.
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
  await startOnce(
    client,
    config,
    {
      type: WEBHOOK_DELIVERY_WORKFLOW,
      args: [
        {
          deliveryId: params.deliveryId,
          policy: params.policy,
          attemptsDone: 1,
          earlierAttempts: [params.attempt],
          handedOverBy: params.handedOverBy,
        },
      ],
    },
    {
      kind: 'webhook-delivery',
      parts: [params.deliveryId],
      companyId: params.companyId,
      correlationId: params.correlationId,
    },
    { rerunClosed: true },
  );
}
