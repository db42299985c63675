/**
 * Waking a reactivated company's held deliveries (README "Billing"; hold.ts). A delivery held in a workflow
 * waits on a timer that grows to 30 minutes; after the reactivation commits, `wakeHeldDeliveries` signals
 * the company's running batch and delivery workflows (`companyReactivatedSignal`), which end their wait and
 * check again at once. Best effort: a workflow this misses still goes on when its timer ends.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  companyReactivatedSignal,
  WEBHOOK_BATCH_WORKFLOW,
  WEBHOOK_DELIVERY_WORKFLOW,
} from '../../workflows/definitions/webhooks';
import { COMPANY_ID } from '../../workflows/shared';

/**
 * At most this many workflows are signalled by one call (the first ones visibility lists), so one call stays
 * a bounded number of requests. Any others wait for their timers (at most 30 minutes). A woken workflow whose
 * deliveries go out closes, so a later call (e.g. `company:reactivate` run again) lists those still running;
 * signalling one again is harmless (a workflow that is not held, or woken twice, only checks once more).
 */
export const WAKE_MAX_WORKFLOWS = 1_000;
const PARALLEL_SIGNALS = 16;

export interface WakeResult {
  /** workflows signalled */
  signalled: number;
  /** listed as running, but closed before the signal reached them (nothing to wake) */
  finished: number;
  /** more workflows were running than WAKE_MAX_WORKFLOWS: those not signalled wait for their timers */
  capped: boolean;
  /** signals that failed for another reason; those workflows wait for their timers */
  errors: unknown[];
}

/**
 * The visibility query of the company's running webhook workflows: batches and deliveries, all started with
 * the company's `CompanyId` search attribute (starts.ts, `workflowIdentity`).
 */
export function runningWebhookWorkflowsQuery(companyId: string): string {
  // a company id is a UUID; nothing else may reach the query text
  if (!/^[0-9A-Za-z-]+$/.test(companyId)) throw new Error(`invalid company id "${companyId}"`);
  return (
    `${COMPANY_ID.name} = '${companyId}' AND ExecutionStatus = 'Running' AND ` +
    `WorkflowType IN ('${WEBHOOK_BATCH_WORKFLOW}', '${WEBHOOK_DELIVERY_WORKFLOW}')`
  );
}

/**
 * Signals the company's running webhook batch and delivery workflows (at most `max`) so that held deliveries
 * check again now. Call after the reactivation commits: a workflow woken earlier would read the company still
 * suspended and wait again. Throws only when the list itself fails.
 */
export async function wakeHeldDeliveries(
  client: Client,
  companyId: string,
  max = WAKE_MAX_WORKFLOWS,
): Promise<WakeResult> {
  const runs: Array<{ workflowId: string; runId: string }> = [];
  let capped = false;
  const query = runningWebhookWorkflowsQuery(companyId);
  for await (const wf of client.workflow.list({ query, pageSize: Math.min(max + 1, 1_000) })) {
    if (runs.length === max) {
      capped = true;
      break;
    }
    runs.push({ workflowId: wf.workflowId, runId: wf.runId });
  }
  const result: WakeResult = { signalled: 0, finished: 0, capped, errors: [] };
  for (let i = 0; i < runs.length; i += PARALLEL_SIGNALS) {
    const chunk = runs.slice(i, i + PARALLEL_SIGNALS);
    const outcomes = await Promise.allSettled(
      chunk.map((r) => client.workflow.getHandle(r.workflowId, r.runId).signal(companyReactivatedSignal)),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') result.signalled++;
      else if (outcome.reason instanceof WorkflowNotFoundError) result.finished++;
      else result.errors.push(outcome.reason);
    }
  }
  return result;
}
