import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ComparisonActivities } from '../activities/comparisons';
import type { ComparisonFailureReason, ComparisonRequest } from './definitions/comparisons';
import { COMPARISON_FAILURE_TYPE } from './shared';

const { prepareComparison, failComparison } = proxyActivities<ComparisonActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * The comparison itself: a worker that dies stops heartbeating; after 10 s the attempt times out and
 * another worker runs it again from the stored files (the row's conditional status change makes it save
 * once). Transient failures are retried 5 times; a comparison that cannot succeed fails at once.
 */
const { compareVersions } = proxyActivities<ComparisonActivities>({
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [COMPARISON_FAILURE_TYPE],
  },
});

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
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const known = cause instanceof ApplicationFailure && cause.type === COMPARISON_FAILURE_TYPE;
    const reason = known
      ? String((cause.details?.[0] as string | undefined) ?? 'unparsable_file')
      : 'internal_error';
    const message = known
      ? cause.message
      : 'the comparison failed after every retry (storage or database unavailable, or an internal error)';
    return failComparison({
      request: withId,
      comparisonId: prepared.comparisonId,
      reason: reason as ComparisonFailureReason,
      message,
    });
  }
}
