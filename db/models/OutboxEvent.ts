import { TenantModel } from './base';

export class OutboxEvent extends TenantModel {
  static override tableName = 'outbox';
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  type!: string;
  data!: Record<string, unknown>;
  correlationId!: string | null;
  dispatchedAt!: Date | null;
}
