import { proxyActivities } from '@temporalio/workflow';
import type { FileActivities } from '../activities/files';

const { sweepOrphanObjects } = proxyActivities<FileActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Run by the Temporal Schedule `retention:file-orphans:<task queue>`: removes objects left by uploads that
 * never committed (older than an hour, so uploads in progress are left alone).
 */
export async function fileOrphanSweepWorkflow(
  input: { olderThanMs?: number } = {},
): Promise<{ objectsRemoved: number; uploadsAborted: number }> {
  return sweepOrphanObjects(input);
}
