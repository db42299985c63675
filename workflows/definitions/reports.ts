/**
 * The contract between the report workflow and the code that starts it (the files domain after an upload,
 * the hourly sweep, tests): the workflow's name, id and input. Both sides import this module, never each
 * other. Imported inside the workflow sandbox: no Node built-ins here.
 */
import type { ReportRequest } from '../../activities/reports';

/** The reason codes of a failed build (named by the workflow when it ends a build as failed). */
export type { FailureReason } from '../../domain/reports/engine/types';
import { reportWorkflowParts, workflowIdentity, type WorkflowStartIdentity } from '../shared';

/** Workflow type name, as started by name from outside the sandbox (workflows/report.ts). */
export const REPORT_WORKFLOW = 'reportWorkflow';

export type ReportWorkflowInput = ReportRequest;

/**
 * The start options of the report workflow of one version: id `report:<fileId>:v<version>` (deterministic,
 * so a second start of the same version is refused as already started) or `…:rebuild-<build>` for a
 * rebuild (`input.build` 2, 3, …), task queue, CompanyId and the correlation id, and its input.
 */
export function reportStart(
  input: ReportWorkflowInput,
  params: { taskQueue: string; correlationId?: string },
): WorkflowStartIdentity & { args: [ReportWorkflowInput] } {
  return {
    ...workflowIdentity({
      kind: 'report',
      parts: reportWorkflowParts(input.fileId, input.version, input.build),
      companyId: input.companyId,
      taskQueue: params.taskQueue,
      correlationId: params.correlationId,
    }),
    args: [input],
  };
}
