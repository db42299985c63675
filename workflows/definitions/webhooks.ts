/**
 * The contract between the webhook workflows and the code that starts, signals and queries them (the
 * webhooks domain, its activities, tests): workflow names, ids, inputs and results, signals and queries.
 * Both sides import this module and never each other. Imported inside the workflow sandbox: no Node
 * built-ins here, nor in the delivery policy it re-exports.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { workflowId } from '../shared';
import type { DeliveryPolicy } from '../../domain/webhooks/policy';

export {
  FAILURE,
  holdDelayMs,
  retryDelaysMs,
  WEBHOOK_MAX_ATTEMPTS,
  type DeliveryPolicy,
} from '../../domain/webhooks/policy';

/** Workflow type names, as started by name from outside the sandbox. */
export const WEBHOOK_BATCH_WORKFLOW = 'webhookBatchWorkflow';
export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';
export const WEBHOOK_RETENTION_WORKFLOW = 'webhookDeliveryRetentionWorkflow';

/** `webhook-delivery:<deliveryId>`: the workflow of one delivery's retries (or of a ping, a redelivery). */
export function deliveryWorkflowId(deliveryId: string): string {
  return workflowId('webhook-delivery', deliveryId);
}

/**
 * `webhook-batch:<lowest delivery id>:<digest of all its delivery ids>`: the first attempts of one company's
 * deliveries of a pass. The digest makes the id name the whole group, so a group with one delivery more is
 * another workflow (computed outside the sandbox: `batchWorkflowIdOf` in domain/webhooks/starts.ts).
 */
export function batchWorkflowId(lowestDeliveryId: string, deliveriesDigest: string): string {
  return workflowId('webhook-batch', lowestDeliveryId, deliveriesDigest);
}

/** One attempt as operators see it in the workflow's history (a signal per failed attempt before the last). */
export interface AttemptRecord {
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  at: string;
}

/** Sent by the attempt activity after each failed attempt that will be retried, so history shows it. */
export const attemptFailedSignal = defineSignal<[AttemptRecord]>('attemptFailed');
/** Every attempt of a delivery workflow so far (the earlier ones handed over included). */
export const attemptsQuery = defineQuery<AttemptRecord[]>('attempts');

/**
 * Sent to a company's running batch and delivery workflows once it is reactivated (domain/webhooks/wake.ts):
 * a held delivery stops waiting and checks again at once instead of at the end of its timer. The check reads
 * the company's status afresh, so a signal that comes while it is still suspended sends nothing.
 */
export const companyReactivatedSignal = defineSignal('companyReactivated');

export interface WebhookDeliveryInput {
  deliveryId: string;
  policy: DeliveryPolicy;
  /**
   * Attempts already made elsewhere: 1 when a delivery batch hands over a delivery whose first attempt
   * failed (its activity starts this workflow). 0 or absent: this workflow makes them all.
   */
  attemptsDone?: number;
  /** the earlier attempts, so this workflow's history and `attempts` query show every attempt */
  earlierAttempts?: AttemptRecord[];
  /** the batch workflow that owned the delivery until now (the attempt activity takes it over) */
  handedOverBy?: string;
}

export interface WebhookDeliveryResult {
  /** `owned-elsewhere`: another workflow (a batch) attempts this delivery; the record was left alone */
  status: 'succeeded' | 'failed' | 'cancelled' | 'owned-elsewhere';
  attempts: number;
  responseStatus: number | null;
}

export interface WebhookBatchInput {
  companyId: string;
  deliveries: Array<{ id: string; correlationId?: string | null }>;
  policy: DeliveryPolicy;
}

/** One delivery's first attempt as the batch's history shows it. */
export interface FirstAttemptOutcome {
  deliveryId: string;
  /** the delivery's status after its first attempt (`retrying`: handed to its own workflow) */
  status: 'succeeded' | 'retrying' | 'failed' | 'cancelled';
  responseStatus: number | null;
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
