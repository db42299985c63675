import { isCancellation, patched, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ComparisonActivities } from '../activities/comparisons';
import type { ComparisonFailureReason, ComparisonRequest } from './definitions/comparisons';
import { analysisActivity, analysisFailure, BOOKKEEPING_ACTIVITY } from './definitions/analysis';
import { COMPARISON_FAILURE_TYPE } from './shared';

const { prepareComparison, failComparison, comparisonReportsSettled } =
  proxyActivities<ComparisonActivities>(BOOKKEEPING_ACTIVITY);
/**
 * The comparison itself (run again from the stored files by another worker when one dies; the row's
 * conditional status change makes it save once); one that cannot succeed fails at once.
 */
const { compareVersions } = proxyActivities<ComparisonActivities>(analysisActivity(COMPARISON_FAILURE_TYPE));

export type ComparisonWorkflowInput = ComparisonRequest;

/** The change that made comparisons wait for reports (histories from before it replay without the wait). */
export const REPORT_WAIT_PATCH = 'comparison-waits-for-reports';
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 10_000;

/**
 * Waits until both versions' reports have settled (ready or failed), at most the configured time
 * (COMPARISON_REPORT_WAIT_SECONDS): the comparison then takes their inferred types instead of classifying
 * every cell of both versions again. Polls with a growing interval (0.25 s doubling up to 10 s), each poll
 * one short activity and one timer in the history — an operator sees the wait in the Web UI.
 */
async function untilReportsSettle(request: ComparisonRequest, comparisonId: string): Promise<void> {
  const since = Date.now(); // workflow time: deterministic on replay
  let interval = FIRST_POLL_MS;
  for (;;) {
    const { settled, maxWaitMs } = await comparisonReportsSettled({ request, comparisonId });
    if (settled || Date.now() - since >= maxWaitMs) return;
    await sleep(Math.min(interval, Math.max(1, maxWaitMs - (Date.now() - since))));
    interval = Math.min(interval * 2, MAX_POLL_MS);
  }
}

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
  if (patched(REPORT_WAIT_PATCH)) await untilReportsSettle(withId, prepared.comparisonId);
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
