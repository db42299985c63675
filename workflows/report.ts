import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ReportActivities, ReportRequest } from '../activities/reports';
import type { FailureReason } from './definitions/reports';
import { analysisActivity, analysisFailure, BOOKKEEPING_ACTIVITY } from './definitions/analysis';
import { REPORT_FAILURE_TYPE } from './shared';

const { prepareReport, failReport } = proxyActivities<ReportActivities>(BOOKKEEPING_ACTIVITY);
/** The build itself; a file that cannot be analysed fails at once (REPORT_FAILURE_TYPE). */
const { buildReport } = proxyActivities<ReportActivities>(analysisActivity(REPORT_FAILURE_TYPE));

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
    const { reason, message } = analysisFailure(err, REPORT_FAILURE_TYPE, 'the build');
    const { status } = await failReport({ request, reason: reason as FailureReason, message });
    return { status };
  }
}
