/**
 * Billing numbers and pure functions shared with the workflow sandbox (no Node built-ins here).
 */

/** Companies per finalisation chunk (one activity, one transaction). */
export const DEFAULT_CHUNK_SIZE = 200;
/** Chunks of one period finalised at the same time. */
export const DEFAULT_CHUNK_CONCURRENCY = 4;

/** The period (calendar month, UTC, e.g. 2026-10) before the month of `at`: what a run at the start of a month closes. */
export function previousPeriodKey(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}
