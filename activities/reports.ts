import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { ForeignKeyViolationError } from 'objection';
import { Report } from '../db/models';
import { withCompany } from '../db/unitOfWork';

export interface ReportRequest {
  companyId: string;
  fileId: string;
  fileVersionId: string;
  version: number;
}

export interface ReportDeps {
  knex: Knex;
}

export function createReportActivities(deps: ReportDeps) {
  return {
    /**
     * Records that a report on this version is wanted. Idempotent (one row per version, a retry finds it);
     * a version deleted meanwhile is not an error: there is nothing to report on.
     */
    async recordReportRequested(
      request: ReportRequest,
    ): Promise<{ reportId: string | null; status: string }> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? null;
      // one unit of work acting for the request's company (row-level security)
      let report: Report | undefined;
      try {
        report = await withCompany(deps.knex, request.companyId, async (trx) => {
          await Report.scoped(request.companyId, trx)
            .insert({
              id: randomUUID(),
              fileId: request.fileId,
              fileVersionId: request.fileVersionId,
              version: request.version,
              status: 'requested',
              workflowId,
            })
            .onConflict('fileVersionId')
            .ignore();
          return Report.scoped(request.companyId, trx).findOne({ fileVersionId: request.fileVersionId });
        });
      } catch (err) {
        if (err instanceof ForeignKeyViolationError) return { reportId: null, status: 'file_deleted' };
        throw err;
      }
      return { reportId: report?.id ?? null, status: report?.status ?? 'file_deleted' };
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
