import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ReportActivities, ReportRequest } from '../activities/reports';
import type { FailureReason } from './definitions/reports';
import { REPORT_FAILURE_TYPE } from './shared';

const { prepareReport, failReport } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '30 seconds',
  // bookkeeping: retried until PostgreSQL answers again
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * The build itself. A worker that dies stops heartbeating: after 10 s the attempt times out and another
 * worker starts it again from the stored file. Transient failures (MinIO or PostgreSQL down) are retried
 * 5 times over about a minute; a file that cannot be analysed fails at once (REPORT_FAILURE_TYPE).
 */
const { buildReport } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [REPORT_FAILURE_TYPE],
  },
});

export type ReportWorkflowInput = ReportRequest;

/**
 * The report build of one file version: `report:<fileId>:v<version>` (started after the upload commits)
 * or `…:rebuild-<n>` (POST …/report/rebuild). Cancelling it (the file was deleted) stops the build; the
 * report row goes with the file.
 */
export async function reportWorkflow(input: ReportWorkflowInput): Promise<{ status: string }> {
  const correlationId = (workflowInfo().memo?.correlationId as string | undefined) ?? input.correlationId;
  const request: ReportRequest = { ...input, build: input.build ?? 1, correlationId };
  const prepared = await prepareReport(request);
  if (!prepared) return { status: 'file_deleted' };
  if (prepared.build !== request.build) return { status: 'superseded' };
  try {
    const outcome = await buildReport(request);
    return { status: outcome.status };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const analysis = cause instanceof ApplicationFailure && cause.type === REPORT_FAILURE_TYPE;
    const reason = analysis
      ? String((cause.details?.[0] as string | undefined) ?? 'unparsable_file')
      : 'internal_error';
    const message = analysis
      ? cause.message
      : 'the build failed after every retry (storage or database unavailable, or an internal error)';
    const { status } = await failReport({ request, reason: reason as FailureReason, message });
    return { status };
  }
}
