import { proxyActivities } from '@temporalio/workflow';
import type { CollabActivities } from '../activities/collab';

const { deleteExpiredAuditEntries } = proxyActivities<CollabActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Run by the Temporal Schedule `retention:audit-log:<task queue>`: removes entries older than AUDIT_RETENTION_DAYS. */
export async function auditRetentionWorkflow(): Promise<{ deleted: number }> {
  return deleteExpiredAuditEntries();
}
