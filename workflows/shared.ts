/**
 * Names shared by the API, the worker and workflow code: task queue, workflow ids, search attributes.
 * Imported inside the workflow sandbox too, so no Node built-ins here.
 */
import { defineSearchAttributeKey, SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';

export const DEFAULT_TASK_QUEUE = 'data-service';

/** Keyword search attribute on every workflow, so operators can filter a company's work in the Web UI. */
export const COMPANY_ID = defineSearchAttributeKey('CompanyId', SearchAttributeType.KEYWORD);

/** Workflows that belong to no company (the outbox dispatcher, schedules) carry this CompanyId. */
export const SYSTEM_COMPANY = '_system';

export type WorkflowKind =
  | 'outbox-dispatcher'
  | 'webhook-batch'
  | 'webhook-delivery'
  | 'report'
  | 'comparison'
  | 'retention'
  | 'billing';

/**
 * Readable, deterministic ids that name the business object, e.g. `webhook-delivery:<deliveryId>`.
 * The same object always gives the same id, so starting twice is harmless.
 */
export function workflowId(kind: WorkflowKind, ...parts: Array<string | number>): string {
  for (const part of parts) {
    const text = String(part);
    if (text === '' || /[\s:]/.test(text)) throw new Error(`invalid workflow id part "${text}"`);
  }
  return [kind, ...parts.map(String)].join(':');
}

export interface WorkflowStartIdentity {
  workflowId: string;
  taskQueue: string;
  typedSearchAttributes: TypedSearchAttributes;
  memo: { correlationId?: string };
}

/** The common start options: id, task queue, CompanyId search attribute and the request's correlation id. */
export function workflowIdentity(params: {
  kind: WorkflowKind;
  parts: Array<string | number>;
  companyId: string;
  taskQueue: string;
  correlationId?: string;
}): WorkflowStartIdentity {
  return {
    workflowId: workflowId(params.kind, ...params.parts),
    taskQueue: params.taskQueue,
    typedSearchAttributes: new TypedSearchAttributes([{ key: COMPANY_ID, value: params.companyId }]),
    memo: params.correlationId ? { correlationId: params.correlationId } : {},
  };
}

/** The ApplicationFailure type of a report build that cannot succeed (bad file, over a limit): not retried. */
export const REPORT_FAILURE_TYPE = 'ReportAnalysisFailure';

/**
 * Id parts of a report build: `report:<fileId>:v<version>` for the build the upload starts, and
 * `report:<fileId>:v<version>:rebuild-<build>` for rebuild number `build` (2, 3, …).
 */
export function reportWorkflowParts(fileId: string, version: number, build = 1): string[] {
  const parts = [fileId, `v${version}`];
  if (build > 1) parts.push(`rebuild-${build}`);
  return parts;
}

/** The ApplicationFailure type of a comparison that cannot succeed (bad file, missing key column): not retried. */
export const COMPARISON_FAILURE_TYPE = 'ComparisonFailure';

/**
 * Id parts of a comparison: `comparison:<fileId>:v<base>:v<target>` for the automatic comparison of a new
 * version with its predecessor, `comparison:<fileId>:v<base>:v<target>:<comparisonId>` for a requested one.
 */
export function comparisonWorkflowParts(
  fileId: string,
  baseVersion: number,
  targetVersion: number,
  comparisonId?: string,
): string[] {
  const parts = [fileId, `v${baseVersion}`, `v${targetVersion}`];
  if (comparisonId) parts.push(comparisonId);
  return parts;
}
