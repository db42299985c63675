import { proxyActivities } from '@temporalio/workflow';
import type { ReportActivities, ReportRequest } from '../activities/reports';

const { recordReportRequested } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export type ReportWorkflowInput = ReportRequest;

/**
 * The report workflow of one file version (id `report:<fileId>:v<version>`), started after an upload
 * commits. For now it only records that a report is wanted; the analysis work fills in the build
 * (profile, rules, score, detectors) here, so the upload path stays as it is.
 */
export async function reportWorkflow(input: ReportWorkflowInput): Promise<{ status: string }> {
  const { status } = await recordReportRequested(input);
  return { status };
}
