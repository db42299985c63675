/**
 * The contract between the comparison workflow and the code that starts it (the files domain after an
 * upload, POST /comparisons): the workflow's name, id and input. Both sides import this module, never each
 * other. Imported inside the workflow sandbox: no Node built-ins here.
 */
import type { ComparisonRequest } from '../../domain/comparisons/run';

/** The comparison's input and the reason codes of a failed comparison, for the workflow. */
export type { ComparisonFailureReason, ComparisonRequest } from '../../domain/comparisons/run';
import { comparisonWorkflowParts, workflowIdentity, type WorkflowStartIdentity } from '../shared';

/** Workflow type name, as started by name from outside the sandbox (workflows/comparison.ts). */
export const COMPARISON_WORKFLOW = 'comparisonWorkflow';

export type ComparisonWorkflowInput = ComparisonRequest;

/**
 * The start options of a comparison: id `comparison:<fileId>:v<base>:v<target>` for the automatic
 * comparison of a new version with its predecessor, `…:<comparisonId>` for a requested one; task queue,
 * CompanyId and the correlation id, and its input.
 */
export function comparisonStart(
  target: { fileId: string; baseVersion: number; targetVersion: number; comparisonId?: string },
  input: ComparisonWorkflowInput,
  params: { taskQueue: string; correlationId?: string },
): WorkflowStartIdentity & { args: [ComparisonWorkflowInput] } {
  return {
    ...workflowIdentity({
      kind: 'comparison',
      parts: comparisonWorkflowParts(
        target.fileId,
        target.baseVersion,
        target.targetVersion,
        target.comparisonId,
      ),
      companyId: input.companyId,
      taskQueue: params.taskQueue,
      correlationId: params.correlationId,
    }),
    args: [input],
  };
}
