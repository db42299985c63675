import { proxyActivities } from '@temporalio/workflow';
import type { FileActivities } from '../activities/files';

const { sweepOrphanObjects, startMissingAnalyses } = proxyActivities<FileActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** the activities' answers (their types from activities/files.ts: workflow code imports no domain code) */
type Swept = Awaited<ReturnType<FileActivities['sweepOrphanObjects']>>;
type Started = Awaited<ReturnType<FileActivities['startMissingAnalyses']>>;

/**
 * Run by the Temporal Schedule `retention:file-orphans:<task queue>`: removes objects left by uploads that
 * never committed (older than an hour, so uploads in progress are left alone), and starts the report
 * workflow and the automatic comparison of versions whose start after the upload failed (no row after five
 * minutes), and report rebuilds and requested comparisons whose start after their request failed (still queued
 * after five minutes).
 */
export async function fileOrphanSweepWorkflow(
  input: { olderThanMs?: number } = {},
): Promise<Swept & Started> {
  const swept = await sweepOrphanObjects(input);
  const starts = await startMissingAnalyses();
  return { ...swept, ...starts };
}
