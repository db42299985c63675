import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ComparisonActivities } from '../activities/comparisons';
import type { ComparisonFailureReason, ComparisonRequest } from './definitions/comparisons';
import { analysisActivity, analysisFailure, BOOKKEEPING_ACTIVITY } from './definitions/analysis';
import { COMPARISON_FAILURE_TYPE } from './shared';

const { prepareComparison, failComparison } = proxyActivities<ComparisonActivities>(BOOKKEEPING_ACTIVITY);
/**
 * The comparison itself (run again from the stored files by another worker when one dies; the row's
 * conditional status change makes it save once); one that cannot succeed fails at once.
 */
const { compareVersions } = proxyActivities<ComparisonActivities>(analysisActivity(COMPARISON_FAILURE_TYPE));

export type ComparisonWorkflowInput = ComparisonRequest;

/**
 * One comparison: `comparison:<fileId>:v<n-1>:v<n>` (automatic, started after the upload of version n
 * commits) or `comparison:<fileId>:v<a>:v<b>:<comparisonId>` (POST /comparisons). Cancelling it (the file
 * was deleted) stops the run; its rows go with the file.
 */
export async function comparisonWorkflow(input: ComparisonWorkflowInput): Promise<{ status: string }> {
  const correlationId = (workflowInfo().memo?.correlationId as string | undefined) ?? input.correlationId;
  const request: ComparisonRequest = { ...input, correlationId };
  const prepared = await prepareComparison(request);
  if (!prepared) return { status: 'file_deleted' };
  const withId: ComparisonRequest = { ...request, comparisonId: prepared.comparisonId };
  try {
    const outcome = await compareVersions(withId);
    return { status: outcome.status };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const { reason, message } = analysisFailure(err, COMPARISON_FAILURE_TYPE, 'the comparison');
    return failComparison({
      request: withId,
      comparisonId: prepared.comparisonId,
      reason: reason as ComparisonFailureReason,
      message,
    });
  }
}
