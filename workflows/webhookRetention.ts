import { proxyActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';

const { deleteExpiredWebhookDeliveries } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Run by the Temporal Schedule `retention:webhook-deliveries:<task queue>`: removes deliveries older than 30 days. */
export async function webhookDeliveryRetentionWorkflow(): Promise<{ deleted: number }> {
  return deleteExpiredWebhookDeliveries();
}
