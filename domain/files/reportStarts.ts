import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { REPORT_WORKFLOW, reportStart, type ReportWorkflowInput } from '../../workflows/definitions/reports';

/**
 * Starts the report workflow of one version (`report:<fileId>:v<n>`). Rejects with
 * WorkflowExecutionAlreadyStartedError when that workflow was started already.
 */
export async function startReport(
  temporal: Client,
  input: ReportWorkflowInput,
  params: { taskQueue: string; correlationId?: string },
): Promise<void> {
  await temporal.workflow.start(REPORT_WORKFLOW, reportStart(input, params));
}

/**
 * Starts the report workflow `report:<fileId>:v<n>` again for versions that have no `reports` row some minutes
 * after their upload: the start after commit is not awaited by the upload and only logged when it fails
 * (Temporal down). The id is the upload's own, so a workflow still running is not started twice
 * (WorkflowExecutionAlreadyStarted counts as running). At most `limit` versions per call, oldest first,
 * among those uploaded in the last `withinMs` (a week): a report that keeps failing is tried hourly for a
 * week, and cannot hold back newer versions behind it for ever.
 */
export async function startMissingReports(
  knex: Knex,
  temporal: Client,
  taskQueue: string,
  { olderThanMs = 5 * 60_000, withinMs = 7 * 24 * 3_600_000, now = Date.now(), limit = 500 } = {},
): Promise<{ reportsStarted: number; reportsRunning: number }> {
  const versions = (await knex('fileVersions as v')
    .leftJoin('reports as r', 'r.fileVersionId', 'v.id')
    .whereNull('r.id')
    .where('v.createdAt', '<', new Date(now - olderThanMs))
    .where('v.createdAt', '>', new Date(now - withinMs))
    .orderBy('v.createdAt')
    .limit(limit)
    .select('v.id', 'v.companyId', 'v.fileId', 'v.version')) as Array<{
    id: string;
    companyId: string;
    fileId: string;
    version: number;
  }>;
  let reportsStarted = 0;
  let reportsRunning = 0;
  for (const v of versions) {
    try {
      await startReport(
        temporal,
        { companyId: v.companyId, fileId: v.fileId, fileVersionId: v.id, version: v.version },
        { taskQueue },
      );
      reportsStarted++;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      reportsRunning++;
    }
  }
  return { reportsStarted, reportsRunning };
}
