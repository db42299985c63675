import { proxyActivities } from '@temporalio/workflow';
import type { CollabActivities } from '../activities/collab';

const { deleteExpiredNotifications } = proxyActivities<CollabActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Run by the Temporal Schedule `retention:notifications:<task queue>`: removes notifications older than 90 days. */
export async function notificationRetentionWorkflow(): Promise<{ deleted: number }> {
  return deleteExpiredNotifications();
}
