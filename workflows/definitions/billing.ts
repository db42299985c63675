/**
 * The contract of the billing workflows (README "Billing"): names, ids, inputs and results. Imported
 * inside the workflow sandbox: no Node built-ins here, nor in the policy it re-exports.
 */
import { workflowId } from '../shared';
import type { ChunkResult } from '../../domain/billing/finalize';

export {
  DEFAULT_CHUNK_CONCURRENCY,
  DEFAULT_CHUNK_SIZE,
  finalizeInLanes,
  previousPeriodKey,
  type PeriodTotals,
} from '../../domain/billing/policy';
import type { PeriodTotals } from '../../domain/billing/policy';

export const BILLING_SCHEDULE_WORKFLOW = 'billingScheduleWorkflow';
export const BILLING_PERIOD_WORKFLOW = 'billingPeriodWorkflow';

/**
 * `billing:<period>:<task queue>`, e.g. `billing:2026-10:data-service`: the one run of a period at a time
 * (Schedule and operators alike) of the deployment on that task queue (like `outbox-dispatcher:<task queue>`).
 */
export function billingPeriodWorkflowId(periodKey: string, taskQueue: string): string {
  return workflowId('billing', periodKey, taskQueue);
}

/** `billing-schedule:<task queue>` (kind `retention`-style system Schedule id). */
export function billingScheduleId(taskQueue: string): string {
  return workflowId('billing', 'schedule', taskQueue);
}

export type BillingTrigger = 'schedule' | 'operator' | 'test';

export interface BillingPeriodInput {
  /** the closed period, e.g. 2026-10 */
  periodKey: string;
  trigger: BillingTrigger;
  chunkSize?: number;
  concurrency?: number;
}

export interface BillingPeriodResult extends PeriodTotals {
  periodKey: string;
  trigger: BillingTrigger;
}

export interface BillingScheduleInput {
  /** the period to close; by default the one before the month the Schedule fired in */
  periodKey?: string;
}

export type { ChunkResult };
