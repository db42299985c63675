import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import type { Config } from '../common/config';
import type { Storage } from '../common/storage';
import {
  ComparisonFailure,
  failComparison,
  prepareComparison,
  reportsSettled,
  runComparison,
  type ComparisonFailureReason,
  type BeforeSaveHook,
  type ComparisonRequest,
  type RunOutcome,
} from '../domain/comparisons/run';
import { actingAs } from '../db/unitOfWork';
import { withoutFileContent } from './failures';
import { COMPARISON_FAILURE_TYPE } from '../workflows/shared';

export interface ComparisonDeps {
  knex: Knex;
  storage: Storage;
  config: Config;
  /** tests only: called after comparing, before saving */
  beforeSave?: BeforeSaveHook;
}

/**
 * Comparison activities: thin adapters over domain/comparisons/run.ts. Each acts for the company of its
 * request (row-level security, db/unitOfWork.ts): every query, in or out of a transaction.
 */
export function createComparisonActivities(deps: ComparisonDeps) {
  const forCompany = <T>(request: ComparisonRequest, fn: () => Promise<T>) =>
    actingAs({ companyId: request.companyId }, fn);
  return {
    /** The comparison row (the automatic one created queued); null when the file was deleted. */
    async prepareComparison(request: ComparisonRequest) {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? null;
      return forCompany(request, () => prepareComparison(deps.knex, request, workflowId));
    },

    /**
     * Whether both versions' reports have settled, and how long the workflow may wait for that
     * (COMPARISON_REPORT_WAIT_SECONDS).
     */
    async comparisonReportsSettled(input: {
      request: ComparisonRequest;
      comparisonId: string;
    }): Promise<{ settled: boolean; maxWaitMs: number }> {
      const settled = await forCompany(input.request, () =>
        reportsSettled(deps.knex, input.request.companyId, input.comparisonId),
      );
      return { settled, maxWaitMs: deps.config.comparisons.reportWaitSeconds * 1000 };
    },

    /**
     * The comparison: heartbeats with its progress (phase, bytes read of total, sheets done, changes saved)
     * every second; a cancelled workflow (file deleted) aborts it. A comparison that cannot succeed fails as
     * the non-retryable ApplicationFailure COMPARISON_FAILURE_TYPE carrying the reason code; any other
     * failure (retried) goes out naming only the kind of error, never text of the files (./failures.ts).
     */
    async compareVersions(request: ComparisonRequest): Promise<RunOutcome> {
      const ctx = Context.current();
      try {
        return await forCompany(request, () =>
          runComparison(deps, request, {
            signal: ctx.cancellationSignal,
            heartbeat: (progress) => ctx.heartbeat(progress),
            beforeSave: deps.beforeSave,
          }),
        );
      } catch (err) {
        if (err instanceof ComparisonFailure) {
          throw ApplicationFailure.create({
            type: COMPARISON_FAILURE_TYPE,
            message: err.message,
            nonRetryable: true,
            details: [err.reason],
          });
        }
        if (err instanceof CancelledFailure) throw err; // the file was deleted: reported as cancelled
        throw withoutFileContent(err, 'the comparison');
      }
    },

    async failComparison(input: {
      request: ComparisonRequest;
      comparisonId: string;
      reason: ComparisonFailureReason;
      message: string;
    }) {
      return forCompany(input.request, () =>
        failComparison(deps.knex, input.request, input.comparisonId, input.reason, input.message),
      );
    },
  };
}

export type ComparisonActivities = ReturnType<typeof createComparisonActivities>;
