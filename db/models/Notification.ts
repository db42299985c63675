import { TenantModel } from './base';

/** A notification of one person (domain/notifications); `dedupeKey` names its cause. */
export class Notification extends TenantModel {
  static override tableName = 'notifications';
  static override jsonAttributes: string[] = ['data'];
  static override get hasUpdatedAt(): boolean {
    return false;
  }

  personId!: string;
  kind!: string;
  resourceType!: string;
  resourceId!: string | null;
  data!: Record<string, unknown>;
  dedupeKey!: string;
  readAt!: Date | null;
}
