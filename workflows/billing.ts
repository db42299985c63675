import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { BillingActivities } from '../activities/billing';
import {
  billingPeriodWorkflowId,
  DEFAULT_CHUNK_CONCURRENCY,
  DEFAULT_CHUNK_SIZE,
  finalizeInLanes,
  previousPeriodKey,
  type BillingPeriodInput,
  type BillingPeriodResult,
  type BillingScheduleInput,
} from './definitions/billing';
import { COMPANY_ID, SYSTEM_COMPANY } from './shared';

const { listBillingChunks, finalizeBillingChunk } = proxyActivities<BillingActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Finalises one closed period for every billable company (`billing:<period>:<task queue>`): the companies in chunks
 * (id ranges), a few chunks at a time; each chunk's result lists its companies and the invoices it issued.
 * Safe to run again: a second run issues no invoice (domain/billing/finalize.ts).
 */
export async function billingPeriodWorkflow(input: BillingPeriodInput): Promise<BillingPeriodResult> {
  const chunks = await listBillingChunks({
    periodKey: input.periodKey,
    chunkSize: input.chunkSize ?? DEFAULT_CHUNK_SIZE,
  });
  const totals = await finalizeInLanes(chunks, input.concurrency ?? DEFAULT_CHUNK_CONCURRENCY, (chunk) =>
    finalizeBillingChunk({
      periodKey: input.periodKey,
      afterId: chunk.afterId,
      throughId: chunk.throughId,
      workflowId: workflowInfo().workflowId,
    }),
  );
  return { periodKey: input.periodKey, trigger: input.trigger, ...totals };
}

/**
 * Started by the system Schedule at the start of each month (UTC): closes the previous period (from the
 * time the Schedule fired, so a run caught up later still closes the right month) through the period's own
 * workflow `billing:<period>:<task queue>`. A second firing while that runs finds it running and stops; one after it
 * finished runs it again, which issues nothing new.
 */
export async function billingScheduleWorkflow(
  input: BillingScheduleInput = {},
): Promise<BillingPeriodResult | { periodKey: string; alreadyRunning: true }> {
  const periodKey = input.periodKey ?? previousPeriodKey(workflowInfo().startTime);
  try {
    return await executeChild(billingPeriodWorkflow, {
      workflowId: billingPeriodWorkflowId(periodKey, workflowInfo().taskQueue),
      args: [{ periodKey, trigger: 'schedule' }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      typedSearchAttributes: [{ key: COMPANY_ID, value: SYSTEM_COMPANY }],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { periodKey, alreadyRunning: true };
    throw err;
  }
}
