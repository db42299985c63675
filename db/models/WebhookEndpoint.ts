import { TenantModel } from './base';

export type WebhookDisabledReason = 'disabled_by_admin' | 'receiver_gone' | 'consecutive_failures';

export class WebhookEndpoint extends TenantModel {
  static override tableName = 'webhook_endpoints';
  // `events` is a text[] column, not JSON
  static override jsonAttributes: string[] = [];

  name!: string;
  url!: string;
  events!: string[];
  active!: boolean;
  secretEncrypted!: string;
  consecutiveFailures!: number;
  disabledReason!: WebhookDisabledReason | null;
  disabledAt!: Date | null;
}
