import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Storage } from '../common/storage';
import {
  failBuild,
  prepareBuild,
  runBuild,
  type BuildExtension,
  type BuildOutcome,
  type BuildRequest,
} from '../domain/reports/build';
import { AnalysisFailure, type AnalysisStep, type FailureReason } from '../domain/reports/engine';
import { withoutFileContent } from './failures';
import { actingAs } from '../db/unitOfWork';
import { REPORT_FAILURE_TYPE } from '../workflows/shared';

export type ReportRequest = BuildRequest;

export interface ReportDeps {
  knex: Knex;
  storage: Storage;
  config: Config;
  steps?: readonly AnalysisStep[];
  /** quality rules and sensitive data (issue 13), prepared at the start of each build */
  extensions?: readonly BuildExtension[];
}

/**
 * Report activities: thin adapters over domain/reports/build.ts. Each acts for the company of its request
 * (row-level security, db/unitOfWork.ts): every query of the build, in or out of a transaction.
 */
export function createReportActivities(deps: ReportDeps) {
  const forCompany = <T>(request: ReportRequest, fn: () => Promise<T>) =>
    actingAs({ companyId: request.companyId }, fn);
  return {
    /** The version's report row (created queued for build 1); null when the file was deleted. */
    async prepareReport(request: ReportRequest) {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? null;
      return forCompany(request, () => prepareBuild(deps.knex, request, workflowId));
    },

    /**
     * The build: heartbeats with its progress (rows read, bytes read of total, phase) every second; a
     * cancelled workflow (file deleted) aborts it. A file that cannot be analysed fails as the
     * non-retryable ApplicationFailure REPORT_FAILURE_TYPE carrying the reason code; any other failure is
     * retried and goes out without the file's content (activities/failures.ts).
     */
    async buildReport(request: ReportRequest): Promise<BuildOutcome> {
      const ctx = Context.current();
      try {
        return await forCompany(request, () =>
          runBuild(deps, request, {
            signal: ctx.cancellationSignal,
            heartbeat: (progress) => ctx.heartbeat(progress),
          }),
        );
      } catch (err) {
        if (err instanceof AnalysisFailure) {
          throw ApplicationFailure.create({
            type: REPORT_FAILURE_TYPE,
            message: err.message,
            nonRetryable: true,
            details: [err.reason],
          });
        }
        if (err instanceof CancelledFailure) throw err; // the file was deleted: reported as cancelled
        // retried: what Temporal records and the SDK logs names the kind of error only (DuckDB's and
        // PostgreSQL's messages can quote the file's cells), as for comparisons
        throw withoutFileContent(err, 'the report build');
      }
    },

    /** Ends the build as failed (reason code, report.failed); a no-op once it has ended. */
    async failReport(input: { request: ReportRequest; reason: FailureReason; message: string }) {
      return forCompany(input.request, () =>
        failBuild(deps.knex, input.request, input.reason, input.message),
      );
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
