/**
 * What the report and comparison workflows share: their activity options and how a failed run becomes a
 * reason code. Imported inside the workflow sandbox: no Node built-ins here.
 */
import { ActivityFailure, ApplicationFailure, type ActivityOptions } from '@temporalio/common';

/** Bookkeeping activities (prepare, fail): retried until PostgreSQL answers again. */
export const BOOKKEEPING_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

/**
 * The run itself (a build, a comparison). A worker that dies stops heartbeating: after 10 s the attempt times
 * out and another worker starts it again from the stored files. Transient failures (MinIO or PostgreSQL down)
 * are retried 5 times over about a minute; a run that cannot succeed fails at once (`failureType`).
 */
export function analysisActivity(failureType: string): ActivityOptions {
  return {
    startToCloseTimeout: '20 minutes',
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 5,
      nonRetryableErrorTypes: [failureType],
    },
  };
}

/**
 * The reason code and message a failed run is recorded with: those carried by a `failureType`
 * ApplicationFailure (a run that cannot succeed), else `internal_error` after every retry.
 */
export function analysisFailure(
  err: unknown,
  failureType: string,
  what: string,
): { reason: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type === failureType) {
    return {
      reason: String((cause.details?.[0] as string | undefined) ?? 'unparsable_file'),
      message: cause.message,
    };
  }
  return {
    reason: 'internal_error',
    message: `${what} failed after every retry (storage or database unavailable, or an internal error)`,
  };
}
