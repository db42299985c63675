import { TenantModel } from './base';

/** Delivery status values (docs/webhooks.md "Delivery status"). */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export class WebhookDelivery extends TenantModel {
  static override tableName = 'webhook_deliveries';
  static override jsonAttributes: string[] = ['eventData'];

  endpointId!: string;
  eventId!: string;
  eventType!: string;
  eventData!: Record<string, unknown>;
  eventCreatedAt!: Date;
  redeliveryOf!: string | null;
  status!: DeliveryStatus;
  attempts!: number;
  responseStatus!: number | null;
  lastError!: string | null;
  lastAttemptAt!: Date | null;
  completedAt!: Date | null;
  workflowStartedAt!: Date | null;
  ownerWorkflowId!: string | null;
}
